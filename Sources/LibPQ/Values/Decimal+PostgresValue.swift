import Foundation

/// `numeric`'s binary format: ndigits, weight, sign, dscale (Int16 / UInt16 each), then `ndigits` base-10000
/// digits; value = sum(digit[i] * 10000^(weight - i)).
extension Decimal: PostgresEncodable, PostgresDecodable, PostgresArrayElement {
    private static let positive: UInt16 = 0x0000
    private static let negative: UInt16 = 0x4000
    private static let nan: UInt16 = 0xC000

    /// `numeric`.
    package static var postgresType: PostgresType { .numeric }

    /// Appends the exact value as a `numeric` (every significant digit, any exponent).
    ///
    /// - Throws: ``LibPQError`` `.encoding` for NaN.
    package func encode(into buffer: inout [UInt8]) throws {
        guard !isNaN else { throw LibPQError(.encoding, "Decimal NaN cannot be stored as numeric") }
        // `significand` is the integer mantissa (exponent 0), so its description is plain ASCII digits.
        let exponent = self.exponent
        let scale = Int16(clamping: max(0, -exponent))
        var decimalDigits = Array(significand.description.utf8).map { $0 &- 48 }
        if isZero || decimalDigits.allSatisfy({ $0 == 0 }) {
            Self.appendHeader(digits: 0, weight: 0, sign: Self.positive, scale: scale, into: &buffer)
            return
        }
        // Align to base-10000 groups: value = digits * 10^exponent with exponent a multiple of 4.
        let padding = ((exponent % 4) + 4) % 4
        decimalDigits.append(contentsOf: repeatElement(0, count: padding))
        let alignedExponent = exponent - padding
        let leading = (4 - decimalDigits.count % 4) % 4
        decimalDigits.insert(contentsOf: repeatElement(0, count: leading), at: 0)
        var groups: [Int16] = []
        groups.reserveCapacity(decimalDigits.count / 4)
        var index = 0
        while index < decimalDigits.count {
            let d = decimalDigits[index..<(index + 4)].reduce(0) { $0 * 10 + Int16($1) }
            groups.append(d)
            index += 4
        }
        let weight = groups.count - 1 + alignedExponent / 4
        while groups.last == 0 { groups.removeLast() }
        Self.appendHeader(
            digits: Int16(groups.count), weight: Int16(clamping: weight),
            sign: sign == .minus ? Self.negative : Self.positive, scale: scale, into: &buffer)
        for group in groups { buffer.appendBigEndian(group) }
    }

    private static func appendHeader(
        digits: Int16, weight: Int16, sign: UInt16, scale: Int16, into buffer: inout [UInt8]
    ) {
        buffer.appendBigEndian(digits)
        buffer.appendBigEndian(weight)
        buffer.appendBigEndian(sign)
        buffer.appendBigEndian(scale)
    }

    /// Reads a `numeric` exactly.
    ///
    /// - Throws: ``LibPQError`` `.decoding` for other types, NaN and infinities, more than 38 significant
    ///   digits, or an exponent outside Decimal's range (-128...127).
    package static func decode(from bytes: UnsafeRawBufferPointer, type: PostgresType) throws -> Decimal {
        guard type == .numeric else { throw LibPQError.typeMismatch(type, Decimal.self) }
        guard bytes.count >= 8 else { throw LibPQError.malformed(type, Decimal.self, "header too short") }
        let count = Int(bytes.loadBigEndian(at: 0, as: Int16.self))
        let weight = Int(bytes.loadBigEndian(at: 2, as: Int16.self))
        let signBits = bytes.loadBigEndian(at: 4, as: UInt16.self)
        guard signBits == positive || signBits == negative else {
            let what = signBits == nan ? "NaN" : "infinity"
            throw LibPQError(.decoding, "cannot decode numeric \(what) as Decimal")
        }
        guard count >= 0, bytes.count == 8 + 2 * count else {
            throw LibPQError.malformed(type, Decimal.self, "digit count does not match length")
        }
        if count == 0 { return Decimal(0) }
        var mantissa = Mantissa()
        var exponent = (weight - count + 1) * 4
        for i in 0..<count {
            var digit = UInt64(bytes.loadBigEndian(at: 8 + 2 * i, as: UInt16.self))
            guard digit < 10_000 else { throw LibPQError.malformed(type, Decimal.self, "digit \(digit) > 9999") }
            var multiplier: UInt64 = 10_000
            if i == count - 1 {
                // Drop the last group's trailing zeros so that 38 significant digits always fit.
                while multiplier > 1, digit % 10 == 0 {
                    digit /= 10
                    multiplier /= 10
                    exponent += 1
                }
            }
            guard mantissa.multiplyAdd(multiplier, digit) else {
                throw LibPQError(.decoding, "numeric has more than 38 significant digits; Decimal cannot hold it")
            }
        }
        guard (-128...127).contains(exponent) else {
            throw LibPQError(.decoding, "numeric exponent \(exponent) is outside Decimal's range -128...127")
        }
        return Decimal(sign: signBits == negative ? .minus : .plus, exponent: exponent, significand: mantissa.decimal)
    }
}

/// A 128-bit unsigned accumulator for numeric digits (Decimal's mantissa is 128 bits).
private struct Mantissa {
    private static let twoToThe64 = Decimal(UInt64.max) + 1

    var high: UInt64 = 0
    var low: UInt64 = 0

    /// `self = self * multiplier + addend`; `false` on overflow past 128 bits.
    mutating func multiplyAdd(_ multiplier: UInt64, _ addend: UInt64) -> Bool {
        let lowProduct = low.multipliedFullWidth(by: multiplier)
        let highProduct = high.multipliedReportingOverflow(by: multiplier)
        let (newLow, carryLow) = lowProduct.low.addingReportingOverflow(addend)
        let (highSum, carryA) = highProduct.partialValue.addingReportingOverflow(lowProduct.high)
        let (newHigh, carryB) = highSum.addingReportingOverflow(carryLow ? 1 : 0)
        guard !highProduct.overflow, !carryA, !carryB else { return false }
        high = newHigh
        low = newLow
        return true
    }

    var decimal: Decimal {
        if high == 0 { return Decimal(low) }
        // Exact: the product and sum stay within Decimal's 128-bit mantissa.
        return Decimal(high) * Self.twoToThe64 + Decimal(low)
    }
}
