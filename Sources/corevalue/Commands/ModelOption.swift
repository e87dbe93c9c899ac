import CoreValue
import CoreValueExamples
import CoreValueXcodeModel
import Foundation

/// `--model PATH [--version V]`: the model a command works on, read from a Core Data model as Xcode writes it
/// (`.xcdatamodeld`, `.xcdatamodel` or `contents`), its warnings on stderr; without `--model`, the bundled
/// example model.
enum ModelOption {
    static let names: Set<String> = ["model", "version"]

    static let usage = """
          --model PATH   a Core Data model (.xcdatamodeld bundle, .xcdatamodel folder or its contents
                         file) instead of the example model; what it has that cannot be imported is
                         printed on stderr as warnings
          --version V    the bundle's version to read (default: its current version)
        """

    /// The model of `--model` (its `version`, else `--version`'s, else the bundle's current one), or the
    /// example model.
    static func model(_ arguments: ParsedArguments, version: String? = nil) throws -> ManagedObjectModel {
        guard let path = arguments.value("model") else {
            if arguments.value("version") != nil || version != nil {
                throw UsageError(message: "--version, --from and --to need --model")
            }
            return try ExampleModel.make()
        }
        let imported = try XcodeModel(
            contentsOf: URL(fileURLWithPath: path), version: version ?? arguments.value("version"))
        for warning in imported.warnings { CommandLineTool.printError("warning: \(warning)") }
        return imported.model
    }
}
