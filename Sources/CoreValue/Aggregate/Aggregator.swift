import Foundation

/// Folds rows' values into an ``AggregateRequest``'s results in memory, with SQL's meaning: what a store
/// without SQL answers (``MemoryStore``, through the default of `StoreRefinements.aggregate(_:)`), and what a
/// context answers while it has unsaved changes of the entity.
///
/// Groups come out ordered by their values, each ascending with nulls last, as PostgreSQL orders them.
package struct Aggregator {
    private let request: AggregateRequest
    private let entity: String
    private let resultType: AttributeType
    /// Whether the attribute folded is of an integer type (its total is kept exactly).
    fileprivate let integerInput: Bool
    private var groups: [[AttributeValue]: Accumulator] = [:]

    /// An aggregator for a request checked against `entity` (`resultType(in:)`).
    ///
    /// - Throws: As `resultType(in:)`.
    package init(_ request: AggregateRequest, entity: Entity) throws {
        self.request = request
        self.entity = entity.name
        self.resultType = try request.resultType(in: entity)
        let input = request.key.flatMap { entity.attribute(named: $0)?.type }
        self.integerInput = input == .int16 || input == .int32 || input == .int64
    }

    /// Takes one row (a stored row's or an object's attribute values): its values of the attributes grouped
    /// by, in order, and of the attribute folded (none for ``AggregateFunction/countRows``).
    package mutating func add(_ row: AttributeValues) {
        let group = request.groupBy.map { row[$0] ?? .null }
        let value = request.key.map { row[$0] ?? .null } ?? .null
        groups[group, default: Accumulator()].add(value, request.function)
    }

    /// One result per group in group order; without grouping exactly one, also over no rows (as SQL's
    /// aggregate without `GROUP BY`).
    ///
    /// - Throws: ``CVManagedStructError/Code/aggregateOverflow`` when an integer sum does not fit in `Int64`.
    package func rows() throws -> [AggregateRow] {
        if request.groupBy.isEmpty && groups.isEmpty {
            return [AggregateRow(group: [], value: try Accumulator().result(request.function, resultType, self))]
        }
        let ordered = groups.sorted { lhs, rhs in
            for (left, right) in zip(lhs.key, rhs.key) {
                let order = ValueOrder.sortOrder(left, right, ascending: true)
                if order != 0 { return order < 0 }
            }
            return false
        }
        return try ordered.map { group, accumulator in
            AggregateRow(group: group, value: try accumulator.result(request.function, resultType, self))
        }
    }

    fileprivate func overflow() -> CVManagedStructError {
        CVManagedStructError.aggregateOverflow(entity: entity, key: request.key ?? "", function: "\(request.function)")
    }
}

/// One group's running state.
private struct Accumulator {
    var rows: Int64 = 0
    var values: Int64 = 0
    /// An integer total as `carry` × 2⁶⁴ + `low`: exact whatever the partial sums, as PostgreSQL's `numeric`
    /// total is, so that only a final total beyond `Int64` is an overflow.
    var low: Int64 = 0
    var carry: Int64 = 0
    var double: Double = 0
    var decimal = Decimal(0)
    var extreme: AttributeValue = .null

    mutating func add(_ value: AttributeValue, _ function: AggregateFunction) {
        rows += 1
        guard !value.isNull else { return }
        values += 1
        switch function {
        case .sum, .average: addNumber(value)
        case .minimum, .maximum:
            let order = extreme.isNull ? 0 : (ValueOrder.compare(value, extreme) ?? 0)
            if extreme.isNull || (function == .minimum ? order < 0 : order > 0) { extreme = value }
        case .count, .countRows: break
        }
    }

    private mutating func addNumber(_ value: AttributeValue) {
        switch value {
        case .int16(let number): addInteger(Int64(number))
        case .int32(let number): addInteger(Int64(number))
        case .int64(let number): addInteger(number)
        case .float(let number): double += Double(number)
        case .double(let number): double += number
        case .decimal(let number): decimal += number
        default: break
        }
    }

    private mutating func addInteger(_ number: Int64) {
        let (partial, overflow) = low.addingReportingOverflow(number)
        if overflow { carry += number > 0 ? 1 : -1 }
        low = partial
    }

    /// The integer total as a `Double` (for a mean), exact or rounded once.
    private var integerTotal: Double { Double(carry) * 18_446_744_073_709_551_616 + Double(low) }

    func result(_ function: AggregateFunction, _ type: AttributeType, _ aggregator: Aggregator) throws
        -> AttributeValue
    {
        switch function {
        case .countRows: return .int64(rows)
        case .count: return .int64(values)
        case .minimum, .maximum: return extreme
        case .sum, .average:
            guard values > 0 else { return .null }
            switch type {
            case .decimal: return .decimal(function == .sum ? decimal : decimal / Decimal(values))
            case .int64:
                guard carry == 0 else { throw aggregator.overflow() }
                return .int64(low)
            default:
                // A sum of floating-point values, or a mean of integers or floating-point values.
                if function == .sum { return .double(double) }
                return .double((aggregator.integerInput ? integerTotal : double) / Double(values))
            }
        }
    }
}
