/// The values PostgreSQL cannot keep in an attribute's column, which both stores refuse as a change set is
/// resolved, before anything is written: `MemoryStore` as well, so that code tested against it does not meet
/// the refusal first in production (`PostgresStore` throws `PostgresStoreError.invalidValue`, `MemoryStore`
/// ``CVManagedStructError/Code/structValueError``, each naming the entity and key).
package enum StorableValues {
    /// Why `value` cannot be stored, or `nil` when it can.
    package static func problem(_ value: AttributeValue) -> String? {
        switch value {
        case .string(let text):
            return containsNUL(text) ? "text contains a NUL character, which PostgreSQL text cannot hold" : nil
        case .decimal(let number):
            // PostgreSQL's numeric has a NaN, but the stores neither order nor read one: refused, as in a
            // `Decimal` computation gone wrong it usually is.
            return number.isNaN ? "a Decimal NaN cannot be stored (a numeric column keeps numbers only)" : nil
        default:
            return nil
        }
    }

    /// Whether `text` holds a NUL character (U+0000).
    package static func containsNUL(_ text: String) -> Bool {
        Unchecked.utf8(of: text, contains: 0)
    }
}

extension MemoryStore {
    /// Refuses a predicate comparing with a value PostgreSQL cannot hold (``StorableValues``), as
    /// `PostgresStore` refuses it before it sends the statement: walked without recursion, into related
    /// predicates too.
    ///
    /// - Throws: ``CVManagedStructError/Code/structValueError`` naming the entity and key.
    func refuseUnstorableOperands(_ predicate: CVPredicate, of entity: EntityIndex) throws {
        var stack = [(predicate, entity)]
        while let (predicate, entity) = stack.popLast() {
            let operands: (key: String, values: [AttributeValue])
            switch predicate {
            case .comparison(let key, _, let value): operands = (key, [value])
            case .isIn(let key, let values): operands = (key, values)
            case .between(let key, let lower, let upper): operands = (key, [lower, upper])
            case .stringMatch(let key, _, let text, _): operands = (key, [.string(text)])
            case .and(let predicates), .or(let predicates):
                stack.append(contentsOf: predicates.map { ($0, entity) })
                continue
            case .not(let inner):
                stack.append((inner, entity))
                continue
            case .related(let key, let inner):
                guard let relationship = entity.relationships[key] else { continue }
                stack.append((inner, try index.entity(relationship.destination)))
                continue
            case .isNull, .true, .false:
                continue
            }
            for value in operands.values {
                if let problem = StorableValues.problem(value) {
                    throw CVManagedStructError(
                        .structValueError, entity: entity.name, key: operands.key, message: "an operand: \(problem)")
                }
            }
        }
    }
}
