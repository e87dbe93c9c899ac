@_spi(StoreImplementation) import CoreValue

/// A SQL statement or fragment: text with numbered placeholders, and the values bound to them.
///
/// Interpolating a value appends a placeholder (`$1`, `$2`, ...) and a bind; interpolating an
/// ``SQLIdentifier`` appends it quoted; interpolating another `SQL` appends its text and binds, renumbered.
/// String literals in source code are SQL text; raw text from elsewhere enters only through
/// ``init(unsafeRaw:)``.
///
/// ```swift
/// let sql: SQL = "SELECT * FROM \(SQLIdentifier("Car")) WHERE \(SQLIdentifier("name")) = \(bind: .text(name))"
/// sql.text   // SELECT * FROM "Car" WHERE "name" = $1
/// ```
package struct SQL: Sendable, Hashable, ExpressibleByStringInterpolation, CustomStringConvertible {
    enum Part: Sendable, Hashable {
        case text(String)
        case bind(SQLBind)
    }

    /// The text and binds in order; for a statement sent again with other values (``replacingBinds(_:)``),
    /// made on demand from the kept ones and those values.
    private(set) var parts: [Part] {
        get {
            guard let values else { return storedParts }
            var next = values.makeIterator()
            return storedParts.map { part in
                guard case .bind = part, let value = next.next() else { return part }
                return .bind(value)
            }
        }
        set {
            storedParts = newValue
            values = nil
            rendered = nil
        }
    }
    private var storedParts: [Part]
    /// The values bound in place of those in ``storedParts``, one per placeholder in order; `nil`: theirs.
    /// Kept apart so that sending a kept statement again copies no text.
    private var values: [SQLBind]?
    /// The text and its number of placeholders, kept by ``renderedOnce()`` for a statement sent again and
    /// again with other values (``replacingBinds(_:)``); `nil` otherwise. One object: a request's statement is
    /// copied several times on its way to libpq, and each copy retains it once instead of a string's storage.
    private var rendered: Rendering?

    /// A kept text (see ``rendered``).
    private final class Rendering: Sendable {
        let text: String
        /// How many placeholders the text has: what ``replacingBinds(_:)`` checks, without walking the parts.
        let placeholders: Int
        init(text: String, placeholders: Int) {
            self.text = text
            self.placeholders = placeholders
        }
    }
    /// For a write whose result rows are columns of one table's rows (`RETURNING t."_pk", ...`): that table
    /// and those columns, so that a save whose `COMMIT` reply was lost can be handed the same rows from the
    /// commit table (``CommitMarker``). Not part of equality.
    package private(set) var returnedRows: ReturnedRows?

    /// A table's columns a statement returns, in order (see ``returnedRows``). An object, as ``Rendering`` is:
    /// one reference for a statement's copies to retain.
    package final class ReturnedRows: Sendable {
        /// The table, qualified.
        package let table: SQLIdentifier
        /// The columns, in the order the statement returns them.
        package let columns: [String]
        /// Whether the statement returns one row at most, whatever its values (an `UPDATE` by primary key, an
        /// `INSERT` of one row): a commit identifier keeps that row without aggregating (see ``CommitMarker``).
        package let atMostOne: Bool

        init(table: SQLIdentifier, columns: [String], atMostOne: Bool) {
            self.table = table
            self.columns = columns
            self.atMostOne = atMostOne
        }
    }

    /// The same statement, noted as returning these columns of `table`'s rows (`atMostOne`: never more than
    /// one row).
    package func returning(_ columns: [String], of table: SQLIdentifier, atMostOne: Bool = false) -> SQL {
        var copy = self
        copy.returnedRows = ReturnedRows(table: table, columns: columns, atMostOne: atMostOne)
        return copy
    }

    /// Creates SQL from a string literal written in source code.
    package init(stringLiteral value: String) {
        storedParts = value.isEmpty ? [] : [.text(value)]
    }

    /// Creates SQL from an interpolated string literal.
    package init(stringInterpolation: StringInterpolation) {
        storedParts = stringInterpolation.parts
    }

    /// Creates SQL from text that was not written as a literal. The caller guarantees it holds no user data.
    package init(unsafeRaw text: String) {
        storedParts = text.isEmpty ? [] : [.text(text)]
    }

    /// Creates an empty fragment.
    package init() { storedParts = [] }

    /// The statement text, with binds numbered `$1`, `$2`, ... in order of appearance.
    package var text: String { rendered?.text ?? render() }

    /// The text ``renderedOnce()`` kept, if it did: a statement built once per shape and sent again.
    package var keptText: String? { rendered?.text }

    /// The same statement, its text rendered now and kept.
    package func renderedOnce() -> SQL {
        var copy = self
        copy.rendered = Rendering(text: render(), placeholders: placeholderCount)
        return copy
    }

    /// The same statement with other values bound, one per placeholder in order, keeping a rendered text;
    /// `nil` when `binds` are not one per placeholder. Each must have its placeholder's type (the text may
    /// cast it).
    package func replacingBinds(_ binds: [SQLBind]) -> SQL? {
        guard (rendered?.placeholders ?? placeholderCount) == binds.count else { return nil }
        var result = self
        result.values = binds
        return result
    }

    /// How many placeholders the parts hold.
    private var placeholderCount: Int {
        var count = 0
        for part in storedParts {
            if case .bind = part { count += 1 }
        }
        return count
    }

    /// Equal when the text and the binds are (a kept rendering aside).
    package static func == (lhs: SQL, rhs: SQL) -> Bool { lhs.parts == rhs.parts }

    /// Hashes the text and the binds.
    package func hash(into hasher: inout Hasher) { hasher.combine(parts) }

    private func render() -> String {
        // Sized once, numbers written as digits: every statement that is not kept rendered (a batch's, the
        // first of each shape) is rendered here, so no interpolated string per placeholder.
        var capacity = 0
        for part in storedParts {
            if case .text(let text) = part { capacity += text.utf8.count } else { capacity += 4 }
        }
        var result = ""
        result.reserveCapacity(capacity)
        var number = 0
        for part in storedParts {
            switch part {
            case .text(let text): result += text
            case .bind:
                number += 1
                Self.appendPlaceholder(number, to: &result)
            }
        }
        return result
    }

    /// Appends `$number` without formatting an integer through an interpolated string.
    private static func appendPlaceholder(_ number: Int, to text: inout String) {
        text.append("$")
        guard number >= 10 else {
            text.unicodeScalars.append(Unicode.Scalar(UInt8(ascii: "0") + UInt8(number)))
            return
        }
        text += String(number)
    }

    /// The bound values, in placeholder order.
    package var binds: [SQLBind] {
        if let values { return values }
        return storedParts.compactMap { part in
            if case .bind(let bind) = part { return bind }
            return nil
        }
    }

    /// The statement text (binds are never shown).
    package var description: String { text }

    /// Whether the fragment holds no text and no binds.
    package var isEmpty: Bool { storedParts.isEmpty }

    /// Appends another fragment.
    package mutating func append(_ other: SQL) {
        // In place: statements are built by many appends.
        if values != nil {
            storedParts = parts
            values = nil
        }
        storedParts += other.parts
        rendered = nil
    }

    /// Joins fragments with a separator fragment.
    package static func joined(_ fragments: [SQL], separator: SQL) -> SQL {
        var result = SQL()
        for (index, fragment) in fragments.enumerated() {
            if index > 0 { result.append(separator) }
            result.append(fragment)
        }
        return result
    }

    /// ` AND column BETWEEN $min AND $max` for a condition `column = ANY(keys)`: implied by it, but it lets the
    /// planner see how narrow the keys are. With `= ANY` alone it estimates from the keys' count only, and
    /// reads 1,000 clustered keys of a 10,000-row table by scanning the whole table (about twice the time of
    /// the index range). Empty for no keys.
    package static func keyRange(_ column: SQL, _ keys: [Int64]) -> SQL {
        guard let low = keys.min(), let high = keys.max() else { return "" }
        return " AND \(column) BETWEEN \(bind: .int64(low)) AND \(bind: .int64(high))"
    }

    /// Concatenates two fragments.
    package static func + (lhs: SQL, rhs: SQL) -> SQL {
        var result = lhs
        result.append(rhs)
        return result
    }

    /// Builds ``SQL`` from a literal with interpolated binds, identifiers and fragments.
    package struct StringInterpolation: StringInterpolationProtocol {
        var parts: [Part] = []

        /// Reserves space for the interpolation.
        package init(literalCapacity: Int, interpolationCount: Int) {
            parts.reserveCapacity(interpolationCount * 2 + 1)
        }

        /// Appends literal SQL text from source code.
        package mutating func appendLiteral(_ literal: String) {
            if !literal.isEmpty { parts.append(.text(literal)) }
        }

        /// Appends a placeholder bound to a value.
        package mutating func appendInterpolation(bind: SQLBind) {
            parts.append(.bind(bind))
        }

        /// Appends a placeholder bound to a value, followed by a cast to its type (`$1::bigint[]`).
        package mutating func appendInterpolation(typedBind bind: SQLBind) {
            parts.append(.bind(bind))
            parts.append(.text("::" + bind.typeName))
        }

        /// Appends a quoted identifier.
        package mutating func appendInterpolation(_ identifier: SQLIdentifier) {
            parts.append(.text(identifier.quoted))
        }

        /// Appends another fragment, its binds renumbered.
        package mutating func appendInterpolation(_ fragment: SQL) {
            parts += fragment.parts
        }
    }
}

/// A SQL identifier (a table, column or schema name), always written quoted with embedded `"` doubled.
package struct SQLIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The name, unquoted.
    package var name: String
    /// The schema the name lives in, if qualified.
    package var schema: String?

    /// Creates an identifier, optionally qualified by a schema.
    package init(_ name: String, schema: String? = nil) {
        self.name = name
        self.schema = schema
    }

    /// The identifier as SQL: `"name"` or `"schema"."name"`.
    package var quoted: String {
        let name = Self.quote(self.name)
        guard let schema else { return name }
        return Self.quote(schema) + "." + name
    }

    /// The identifier as SQL.
    package var description: String { quoted }

    /// Quotes a single name, doubling embedded double quotes.
    package static func quote(_ name: String) -> String {
        // By bytes, not characters: a quote followed by a combining mark is one `Character` that is not `"`, but
        // its quote byte still ends the identifier for the server. The usual name has none: one search.
        let quote = UInt8(ascii: "\"")
        guard Unchecked.utf8(of: name, contains: quote) else { return "\"" + name + "\"" }
        var bytes: [UInt8] = [quote]
        for byte in name.utf8 {
            bytes.append(byte)
            if byte == quote { bytes.append(quote) }
        }
        bytes.append(quote)
        return String(decoding: bytes, as: UTF8.self)
    }
}
