import Foundation

extension Date: PostgresInlineEncodable, PostgresDecodable, PostgresArrayElement {
    /// Seconds from Foundation's reference date (2001-01-01) back to PostgreSQL's epoch (2000-01-01 UTC).
    private static let postgresEpochOffsetMicroseconds: Int64 = 31_622_400 * 1_000_000

    /// `timestamp with time zone`.
    package static var postgresType: PostgresType { .timestamptz }

    /// Microseconds since 2000-01-01 UTC, rounded to the nearest microsecond, in network byte order.
    ///
    /// - Throws: ``LibPQError`` `.encoding` for infinite, NaN or out-of-range dates.
    package func encodeInline() throws -> InlineBytes {
        InlineBytes(bigEndian: try postgresMicroseconds())
    }

    /// The value `encodeInline()` writes: microseconds since 2000-01-01 UTC, rounded to the nearest microsecond.
    ///
    /// - Throws: ``LibPQError`` `.encoding` for infinite, NaN or out-of-range dates.
    package func postgresMicroseconds() throws -> Int64 {
        let micros = (timeIntervalSinceReferenceDate * 1_000_000).rounded()
        // PostgreSQL's timestamp range ends in 294276 AD, far inside this bound.
        guard micros.isFinite, abs(micros) < 9.0e18 else {
            throw LibPQError(.encoding, "the date \(self) cannot be stored as timestamptz")
        }
        return Int64(micros) + Self.postgresEpochOffsetMicroseconds
    }

    /// Reads a `timestamp with time zone`.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for other types and for `infinity` / `-infinity`.
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Date {
        guard type == .timestamptz else { throw LibPQError.typeMismatch(type, Date.self) }
        guard bytes.count == 8 else { throw LibPQError.malformed(type, Date.self, "expected 8 bytes") }
        let micros = bytes.loadBigEndian(as: Int64.self)
        guard micros != .max, micros != .min else {
            throw LibPQError(.decoding, "cannot decode timestamptz \(micros > 0 ? "" : "-")infinity as Date")
        }
        let (sinceReference, overflow) = micros.subtractingReportingOverflow(postgresEpochOffsetMicroseconds)
        guard !overflow else { throw LibPQError.malformed(type, Date.self, "timestamp out of range") }
        return Date(timeIntervalSinceReferenceDate: Double(sinceReference) / 1_000_000)
    }
}
