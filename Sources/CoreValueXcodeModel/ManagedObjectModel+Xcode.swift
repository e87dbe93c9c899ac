import Foundation

extension ManagedObjectModel {
    /// Reads a Core Data model as Xcode writes it, as ``XcodeModel/init(contentsOf:version:)`` does, for
    /// code that wants the model alone:
    ///
    /// ```swift
    /// import CoreValueXcodeModel
    /// let model = try ManagedObjectModel(contentsOf: URL(fileURLWithPath: "App/Model.xcdatamodeld"))
    /// ```
    ///
    /// - Parameters:
    ///   - url: A `.xcdatamodeld` bundle, a `.xcdatamodel` folder, or a `contents` file.
    ///   - version: For a bundle, the version to read; its current version when `nil`.
    ///   - warnings: Called once per thing the file had that the model leaves out or changes (a transient
    ///     attribute, a fetch index, ...); by default each is written to standard error, so that none is
    ///     dropped unseen. Use ``XcodeModel`` to get them as a list.
    /// - Throws: What ``XcodeModel/init(contentsOf:version:)`` throws.
    public init(
        contentsOf url: URL, version: String? = nil,
        warnings: (XcodeModelWarning) -> Void = { FileHandle.standardError.write(Data("warning: \($0)\n".utf8)) }
    ) throws {
        let imported = try XcodeModel(contentsOf: url, version: version)
        imported.warnings.forEach(warnings)
        self = imported.model
    }
}
