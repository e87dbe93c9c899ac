import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// An XML document as a tree of elements with their attributes, read with Foundation's `XMLParser`. Built
/// from the parser's callbacks with an explicit stack, never by recursion, so a deep document costs no stack.
struct XMLElement {
    var name: String
    var attributes: [String: String]
    var children: [XMLElement] = []
    /// The line the element starts on, for messages.
    var line: Int

    /// The children named `name`.
    func children(_ name: String) -> [XMLElement] { children.filter { $0.name == name } }

    /// Whether an attribute is `YES`.
    func flag(_ key: String) -> Bool { attributes[key] == "YES" }

    /// Parses `data`.
    ///
    /// - Throws: ``XcodeModelError`` naming the line when the XML is malformed.
    static func parse(_ data: Data, file: String) throws -> XMLElement {
        let parser = XMLParser(data: data)
        let builder = Builder()
        parser.delegate = builder
        parser.shouldResolveExternalEntities = false
        guard parser.parse(), let root = builder.root else {
            throw XcodeModelError(
                file: file,
                message:
                    "malformed XML at line \(parser.lineNumber): \(parser.parserError.map { "\($0)" } ?? "no root element")"
            )
        }
        return root
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [XMLElement] = []
        var root: XMLElement?

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            stack.append(XMLElement(name: elementName, attributes: attributes, line: parser.lineNumber))
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard let element = stack.popLast() else { return }
            if stack.isEmpty {
                root = element
            } else {
                stack[stack.count - 1].children.append(element)
            }
        }
    }
}

/// A `.xcdatamodel(d)` that cannot be read: a missing file, malformed XML, or something with no mapping that
/// cannot be left out (entity inheritance). Names the file and what was wrong.
public struct XcodeModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file or bundle.
    public var file: String
    /// What was wrong.
    public var message: String

    /// Creates an error.
    public init(file: String, message: String) {
        self.file = file
        self.message = message
    }

    /// `<file>: <message>`.
    public var description: String { "\(file): \(message)" }
}
