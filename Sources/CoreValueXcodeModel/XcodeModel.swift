@_exported import CoreValue
import Foundation

/// A Core Data model as Xcode writes it (`.xcdatamodeld` bundle, `.xcdatamodel` folder, or its `contents`
/// file), read into a ``ManagedObjectModel``, with a warning for everything the model had that has no meaning
/// here (never dropped silently).
///
/// ```swift
/// let imported = try XcodeModel(contentsOf: URL(fileURLWithPath: "App/Model.xcdatamodeld"))
/// for warning in imported.warnings { print(warning) }
/// let store = try PostgresStore(model: imported.model, configuration: ...)
/// ```
///
/// Read with Foundation's `XMLParser` (FoundationXML on Linux, which links libxml2): a module of its own, so
/// that an application that declares its model in Swift does not link it.
public struct XcodeModel: Sendable {
    /// The model.
    public var model: ManagedObjectModel
    /// What the file had that the model leaves out or changes, one per item.
    public var warnings: [XcodeModelWarning]
    /// The version read, for a bundle (`Model 2`); `nil` for a single model.
    public var version: String?

    /// Reads a model.
    ///
    /// - Parameters:
    ///   - url: A `.xcdatamodeld` bundle (its current version, from `.xccurrentversion`, unless `version`
    ///     names another), a `.xcdatamodel` folder, or a `contents` file.
    ///   - version: For a bundle, the version to read (`Model 2`, with or without `.xcdatamodel`).
    /// - Throws: ``XcodeModelError`` for a file that is missing or not a model, malformed XML, an unknown
    ///   version, an unknown attribute type, a relationship to a missing entity;
    ///   `CVManagedStructError.invalidModel` when the entities do not make a valid model (an inverse that does
    ///   not match, an unknown parent entity).
    public init(contentsOf url: URL, version: String? = nil) throws {
        let (contents, name) = try Self.contentsFile(url, version: version)
        let data: Data
        do {
            data = try Data(contentsOf: contents)
        } catch {
            throw XcodeModelError(file: contents.path, message: "cannot be read: \(error.localizedDescription)")
        }
        let root = try XMLElement.parse(data, file: contents.path)
        guard root.name == "model" else {
            throw XcodeModelError(file: contents.path, message: "not a Core Data model (root <\(root.name)>)")
        }
        var importer = XcodeModelImporter(file: contents.path)
        self.model = try importer.model(root)
        self.warnings = importer.warnings
        self.version = name
    }

    /// The `contents` file a URL names, and the bundle version chosen.
    private static func contentsFile(_ url: URL, version: String?) throws -> (URL, String?) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw XcodeModelError(file: url.path, message: "no such file or folder")
        }
        guard isDirectory.boolValue else { return (url, nil) }
        if url.pathExtension == "xcdatamodeld" {
            let chosen = try version ?? currentVersion(of: url)
            let folder = chosen.hasSuffix(".xcdatamodel") ? chosen : chosen + ".xcdatamodel"
            let contents = url.appendingPathComponent(folder).appendingPathComponent("contents")
            guard manager.fileExists(atPath: contents.path) else {
                throw XcodeModelError(file: url.path, message: "has no version \"\(chosen)\"")
            }
            return (contents, String(folder.dropLast(".xcdatamodel".count)))
        }
        return (url.appendingPathComponent("contents"), nil)
    }

    /// The current version of a bundle: `.xccurrentversion`'s `_XCCurrentVersionName`, else its only version.
    private static func currentVersion(of bundle: URL) throws -> String {
        let file = bundle.appendingPathComponent(".xccurrentversion")
        if let data = try? Data(contentsOf: file),
            let plist = try? PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any],
            let name = plist["_XCCurrentVersionName"] as? String
        {
            return name
        }
        let versions =
            (try? FileManager.default.contentsOfDirectory(atPath: bundle.path))?
            .filter { $0.hasSuffix(".xcdatamodel") } ?? []
        guard versions.count == 1, let only = versions.first else {
            throw XcodeModelError(
                file: bundle.path,
                message: "has \(versions.count) versions and no .xccurrentversion naming the current one; pass version:"
            )
        }
        return only
    }
}

/// Something a Core Data model had that the imported model leaves out or changes.
public struct XcodeModelWarning: Sendable, Hashable, CustomStringConvertible {
    /// The entity, when the warning is about one.
    public var entity: String?
    /// The attribute, relationship or element, when the warning is about one.
    public var property: String?
    /// What was left out or changed, and why.
    public var message: String

    /// Creates a warning.
    public init(entity: String?, property: String?, message: String) {
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// `Entity.property: message`.
    public var description: String {
        let place = [entity, property].compactMap { $0 }.joined(separator: ".")
        return place.isEmpty ? message : "\(place): \(message)"
    }
}
