@_spi(StoreImplementation) import CoreValue
import Foundation

extension SQL {
    /// `COPY (<this statement>) TO STDOUT (FORMAT binary)`, each bind written in the text as a typed literal;
    /// `nil` when a bind is of a type not written that way here.
    ///
    /// COPY takes no parameters. Only values whose text is made of digits, signs, hexadecimal digits, dashes
    /// and `t`/`f` are written out: integers, Booleans, UUIDs and `NULL`, alone or in arrays (the keys a fetch
    /// by identifiers sends). Nothing a user typed as text reaches the SQL this way: a statement binding a
    /// string, bytes, a date or a number with a fraction stays a parameterized statement.
    package var binaryCopyText: String? {
        var text: [UInt8] = Array("COPY (".utf8)
        for part in parts {
            switch part {
            case .text(let fragment): text.append(contentsOf: fragment.utf8)
            case .bind(let bind):
                guard SQLCopyLiteral.append(bind, to: &text) else { return nil }
            }
        }
        text.append(contentsOf: ") TO STDOUT (FORMAT binary)".utf8)
        return String(decoding: text, as: UTF8.self)
    }
}

/// The literals of ``SQL/binaryCopyText``: `('42'::bigint)`, `('{1,2,NULL}'::bigint[])`.
enum SQLCopyLiteral {
    /// Appends the bind as a parenthesized, typed literal; `false` (and nothing appended) for a type not
    /// written as a literal.
    static func append(_ bind: SQLBind, to text: inout [UInt8]) -> Bool {
        switch bind {
        case .scalar(let type, let value):
            guard isLiteral(type) else { return false }
            if value.isNull {
                text.append(contentsOf: "(NULL::\(bind.typeName))".utf8)
                return true
            }
            let start = text.count
            text.append(contentsOf: "('".utf8)
            guard append(value, to: &text) else {
                text.removeSubrange(start...)
                return false
            }
        case .array(let type, let values):
            guard isLiteral(type) else { return false }
            let start = text.count
            text.append(contentsOf: "('{".utf8)
            for (index, value) in values.enumerated() {
                if index > 0 { text.append(UInt8(ascii: ",")) }
                if value.isNull {
                    text.append(contentsOf: "NULL".utf8)
                    continue
                }
                guard append(value, to: &text) else {
                    text.removeSubrange(start...)
                    return false
                }
            }
            text.append(UInt8(ascii: "}"))
        }
        text.append(contentsOf: "'::".utf8)
        text.append(contentsOf: bind.typeName.utf8)
        text.append(UInt8(ascii: ")"))
        return true
    }

    private static func isLiteral(_ type: AttributeType) -> Bool {
        switch type {
        case .int16, .int32, .int64, .bool, .uuid: return true
        case .float, .double, .string, .data, .date, .decimal, .uri: return false
        }
    }

    /// Appends one non-null value's text inside the quotes; `false` for another type's value.
    private static func append(_ value: AttributeValue, to text: inout [UInt8]) -> Bool {
        switch value {
        case .int16(let number): appendDecimal(Int64(number), to: &text)
        case .int32(let number): appendDecimal(Int64(number), to: &text)
        case .int64(let number): appendDecimal(number, to: &text)
        case .bool(let flag): text.append(UInt8(ascii: flag ? "t" : "f"))
        case .uuid(let uuid): text.append(contentsOf: uuid.uuidString.utf8)
        case .null, .float, .double, .string, .data, .date, .decimal, .uri: return false
        }
        return true
    }

    /// The decimal digits of `number`, with a leading `-` when negative.
    private static func appendDecimal(_ number: Int64, to text: inout [UInt8]) {
        if number < 0 { text.append(UInt8(ascii: "-")) }
        // The magnitude as unsigned, so that Int64.min has one.
        var magnitude = number.magnitude
        // Least significant first, then turned around in place by swaps (no slice, no buffer of its own).
        var low = text.endIndex
        repeat {
            text.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        } while magnitude > 0
        var high = text.endIndex - 1
        while low < high {
            text.swapAt(low, high)
            low += 1
            high -= 1
        }
    }
}
