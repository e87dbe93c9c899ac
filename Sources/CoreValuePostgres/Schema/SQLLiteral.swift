@_spi(StoreImplementation) import CoreValue
import Foundation

/// Renders attribute values as SQL literals, for the one place values cannot be bound: column defaults in DDL.
enum SQLLiteral {
    /// The literal for a value of a column type, e.g. `'it''s'` or `'2024-01-01 00:00:00.000000+00'::timestamptz`.
    static func render(_ value: AttributeValue) -> String {
        switch value {
        case .null: return "NULL"
        case .int16(let number): return String(number)
        case .int32(let number): return String(number)
        case .int64(let number): return String(number)
        case .double(let number): return floating(number.isFinite ? "\(number)" : special(number), "double precision")
        case .float(let number):
            return floating(number.isFinite ? "\(number)" : special(Double(number)), "real")
        case .bool(let flag): return flag ? "TRUE" : "FALSE"
        case .string(let text): return quote(text)
        case .data(let bytes):
            let hex = bytes.map { byte in
                let digits = String(byte, radix: 16)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
            return "'\\x\(hex)'::bytea"
        case .date(let date):
            // Out of range only when the mapping's validation was skipped; never trap on it.
            guard isRepresentable(date) else {
                return quote(date.timeIntervalSince1970 < 0 ? "-infinity" : "infinity") + "::timestamptz"
            }
            return quote(timestamp(date)) + "::timestamptz"
        case .decimal(let number): return quote(number.description) + "::numeric"
        case .uuid(let uuid): return quote(uuid.uuidString.lowercased()) + "::uuid"
        case .uri(let url): return quote(url.absoluteString)
        }
    }

    /// A single-quoted string literal with embedded quotes doubled (standard-conforming strings).
    static func quote(_ text: String) -> String {
        var result = "'"
        for character in text {
            if character == "'" { result += "''" } else { result.append(character) }
        }
        return result + "'"
    }

    private static func floating(_ text: String, _ type: String) -> String {
        text.first == "'" ? text + "::" + type : text
    }

    private static func special(_ number: Double) -> String {
        if number.isNaN { return "'NaN'" }
        return number < 0 ? "'-Infinity'" : "'Infinity'"
    }

    /// Seconds since 1970 of the dates a literal can show: from 0001-01-01 (earlier years would need the
    /// `BC` notation) to just before PostgreSQL's latest `timestamptz` (294276 AD).
    static let dateRange: ClosedRange<Double> = -62_135_596_800...9_224_318_015_999

    /// Whether a date can be written as a `timestamptz` literal: finite and within PostgreSQL's range.
    static func isRepresentable(_ date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite && dateRange.contains(seconds)
    }

    /// `YYYY-MM-DD HH:MM:SS.ffffff+00`, in UTC, at microsecond precision.
    private static func timestamp(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let seconds = (micros / 1_000_000).rounded(.down)
        let fraction = Int(exactly: micros - seconds * 1_000_000) ?? 0
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents(
            [.year, .month, .day, .hour, .minute, .second], from: Date(timeIntervalSince1970: seconds))
        func pad(_ value: Int?, _ width: Int) -> String {
            let text = String(value ?? 0)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(pad(parts.year, 4))-\(pad(parts.month, 2))-\(pad(parts.day, 2)) "
            + "\(pad(parts.hour, 2)):\(pad(parts.minute, 2)):\(pad(parts.second, 2)).\(pad(fraction, 6))+00"
    }
}
