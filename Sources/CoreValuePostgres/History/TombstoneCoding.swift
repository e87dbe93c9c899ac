@_spi(StoreImplementation) import CoreValue
import Foundation

/// The JSON the history table keeps a transaction's tombstones in: by change position, each attribute's
/// value tagged with its type, so that it reads back exactly as it was (`{"3":{"sku":{"t":"string","v":"A1"}}}`).
enum TombstoneCoding {
    private struct Tagged: Codable {
        var t: String
        var v: String?
    }

    static func encode(_ tombstones: [Int: [String: AttributeValue]]) -> String? {
        let tagged = Dictionary(
            uniqueKeysWithValues: tombstones.map { position, values in
                (String(position), values.mapValues(tag))
            })
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(tagged)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The tombstones by change position; throws for text that is not what ``encode(_:)`` wrote.
    static func decode(_ text: String) throws -> [Int: [String: AttributeValue]] {
        let tagged = try JSONDecoder().decode([String: [String: Tagged]].self, from: Data(text.utf8))
        var result: [Int: [String: AttributeValue]] = [:]
        for (position, values) in tagged {
            guard let position = Int(position) else { throw malformed(text) }
            result[position] = try values.mapValues { try untag($0) ?? { throw malformed(text) }() }
        }
        return result
    }

    private static func malformed(_ text: String) -> PostgresStoreError {
        PostgresStoreError(.unexpectedResult, "a history row's tombstones are not readable: \(text.prefix(200))")
    }

    private static func tag(_ value: AttributeValue) -> Tagged {
        switch value {
        case .null: Tagged(t: "null")
        case .int16(let v): Tagged(t: "int16", v: String(v))
        case .int32(let v): Tagged(t: "int32", v: String(v))
        case .int64(let v): Tagged(t: "int64", v: String(v))
        case .double(let v): Tagged(t: "double", v: String(v.bitPattern))
        case .float(let v): Tagged(t: "float", v: String(v.bitPattern))
        case .bool(let v): Tagged(t: "bool", v: v ? "t" : "f")
        case .string(let v): Tagged(t: "string", v: v)
        case .data(let v): Tagged(t: "data", v: v.base64EncodedString())
        case .date(let v): Tagged(t: "date", v: String(v.timeIntervalSinceReferenceDate.bitPattern))
        case .decimal(let v): Tagged(t: "decimal", v: v.description)
        case .uuid(let v): Tagged(t: "uuid", v: v.uuidString)
        case .uri(let v): Tagged(t: "uri", v: v.absoluteString)
        }
    }

    private static func untag(_ tagged: Tagged) -> AttributeValue? {
        if tagged.t == "null" { return .null }
        guard let v = tagged.v else { return nil }
        switch tagged.t {
        case "int16": return Int16(v).map(AttributeValue.int16)
        case "int32": return Int32(v).map(AttributeValue.int32)
        case "int64": return Int64(v).map(AttributeValue.int64)
        case "double": return UInt64(v).map { .double(Double(bitPattern: $0)) }
        case "float": return UInt32(v).map { .float(Float(bitPattern: $0)) }
        case "bool": return .bool(v == "t")
        case "string": return .string(v)
        case "data": return Data(base64Encoded: v).map(AttributeValue.data)
        case "date": return UInt64(v).map { .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: $0))) }
        case "decimal": return Decimal(string: v, locale: Locale(identifier: "en_US_POSIX")).map(AttributeValue.decimal)
        case "uuid": return UUID(uuidString: v).map(AttributeValue.uuid)
        case "uri": return URL(string: v).map(AttributeValue.uri)
        default: return nil
        }
    }
}
