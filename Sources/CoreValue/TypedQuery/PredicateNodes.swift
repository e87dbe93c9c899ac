import Foundation

/// An expression node of a Foundation `Predicate` that has a translation. The conformances below are
/// unconditional: children are translated through ``PredicateTranslator/term(_:)``, which names the first
/// node without a translation in its error.
protocol TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm
}

extension PredicateExpressions.Variable: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .path(try translator.path(of: key))
    }
}

extension PredicateExpressions.Value: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard let constant = PredicateConstant(value) else {
            throw translator.unsupported(
                "a value of type \(Output.self)",
                "values must be attribute types (Int, String, Date, ...), enums with such raw values, optionals, "
                    + "arrays or ranges of those")
        }
        return .constant(constant)
    }
}

extension PredicateExpressions.NilLiteral: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm { .constant(.value(nil)) }
}

extension PredicateExpressions.KeyPath: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        guard case .path(var path) = try translator.term(root) else {
            throw translator.unsupported("a key path on \(Root.Output.self)", "its root is not the closure's element")
        }
        if let attribute = path.attribute {
            // An enum attribute's raw value is what is stored: `$0.kind.rawValue` is the attribute itself.
            if Self.isRawValue(keyPath, of: Root.Output.self) { return .path(path) }
            if attribute.type == .string, keyPath == \String.isEmpty {
                return .condition(translator.onAttribute(path, .comparison(key: attribute.name, .equal, .string(""))))
            }
            throw translator.unsupported("\(path.name).\(keyPath)", "only stored properties name attributes")
        }
        guard path.hops.last?.isToMany != true else {
            throw translator.unsupported(path.name, "a to-many relationship is read with contains(where:) only")
        }
        guard let name = FieldNames.name(of: keyPath, in: Root.Output.self) else {
            throw translator.unsupported(
                "\(keyPath)", "a computed property of \(Root.Output.self) has no column (only stored properties do)")
        }
        path.components.append(name)
        if let attribute = path.entity.attribute(named: name) {
            path.attribute = attribute
        } else if let relationship = path.entity.relationship(named: name) {
            path.hops.append(relationship)
            path.entity = try translator.model.entity(relationship.destination)
        } else {
            throw CVManagedStructError.unknownKey(entity: path.entity.name, key: name)
        }
        return .path(path)
    }

    /// Whether `keyPath` reads `rawValue` of a RawRepresentable type: its value type is the raw type, and
    /// it agrees with `rawValue` on every case when the type lists them.
    private static func isRawValue<T>(_ keyPath: Swift.KeyPath<T, Output>, of type: T.Type) -> Bool {
        guard let raw = T.self as? any RawRepresentable.Type else { return false }
        func check<R: RawRepresentable>(_: R.Type) -> Bool {
            guard R.RawValue.self == Output.self else { return false }
            guard let all = R.self as? any CaseIterable.Type else { return true }
            for element in all.allCasesAny {
                guard let value = element as? T, let instance = element as? R,
                    (value[keyPath: keyPath] as Any as? R.RawValue).map({ "\($0)" == "\(instance.rawValue)" }) == true
                else { return false }
            }
            return true
        }
        return check(raw)
    }
}

extension CaseIterable {
    /// Every case, as `Any`.
    static var allCasesAny: [Any] { allCases.map { $0 as Any } }
}

extension PredicateExpressions.Conjunction: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let left = try translator.condition(translator.term(lhs))
        let right = try translator.condition(translator.term(rhs))
        return .condition(PredicateTranslator.and([left, right]))
    }
}

extension PredicateExpressions.Disjunction: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let left = try translator.condition(translator.term(lhs))
        let right = try translator.condition(translator.term(rhs))
        return .condition(PredicateTranslator.or([left, right]))
    }
}

extension PredicateExpressions.Negation: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        switch try translator.condition(translator.term(wrapped)) {
        case .true: return .condition(.false)
        case .false: return .condition(.true)
        case .not(let inner): return .condition(inner)
        case let condition: return .condition(.not(condition))
        }
    }
}

extension PredicateExpressions.Equal: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(try translator.compare(translator.term(lhs), .equal, translator.term(rhs)))
    }
}

extension PredicateExpressions.NotEqual: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        .condition(try translator.compare(translator.term(lhs), .notEqual, translator.term(rhs)))
    }
}

extension PredicateExpressions.Comparison: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let operation: CVPredicate.ComparisonOperator
        switch op {
        case .lessThan: operation = .lessThan
        case .lessThanOrEqual: operation = .lessThanOrEqual
        case .greaterThan: operation = .greaterThan
        case .greaterThanOrEqual: operation = .greaterThanOrEqual
        @unknown default: throw translator.unsupported("a comparison operator", "it is not one of < <= > >=")
        }
        return .condition(try translator.compare(translator.term(lhs), operation, translator.term(rhs)))
    }
}

extension PredicateExpressions.NilCoalesce: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let left = try translator.term(lhs)
        let right = try translator.term(rhs)
        if case .optionalCondition(let condition, let present) = left,
            case .constant(.value(.bool(let fallback)?)) = right
        {
            return .condition(fallback ? PredicateTranslator.or([condition, .not(present)]) : condition)
        }
        guard case .path(let path) = left, case .constant(.value(let fallback)) = right else {
            throw translator.unsupported("\(left.description) ?? ...", "?? needs a key path and a value")
        }
        return .coalesced(path, fallback)
    }
}

extension PredicateExpressions.OptionalFlatMap: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let base = try translator.term(wrapped)
        guard case .path(let path) = base else {
            throw translator.unsupported("\(base.description)?.", "optional chaining needs a key path")
        }
        // The unwrapped value is the same path: a missing value makes every comparison on it false.
        let result = try translator.with(variable.key, as: path, replacingScope: false) { try $0.term(transform) }
        guard case .condition(let condition) = result else { return result }
        return .optionalCondition(condition, present: try translator.present(path))
    }
}

extension PredicateExpressions.ForcedUnwrap: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.term(inner)
    }
}

extension PredicateExpressions.SequenceContains: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let values = try translator.term(sequence)
        let item = try translator.term(element)
        guard case .constant(.list(let list)) = values, case .path(let path) = item, let attribute = path.attribute
        else {
            throw translator.unsupported(
                "\(values.description).contains(\(item.description))",
                "contains(_:) needs an array of values and a key path to an attribute")
        }
        let known = list.compactMap { $0 }
        let inList = known.isEmpty ? CVPredicate.false : translator.onAttribute(path, .isIn(key: attribute.name, known))
        guard known.count < list.count else { return .condition(inList) }
        return .condition(PredicateTranslator.or([inList, .not(try translator.present(path))]))
    }
}

extension PredicateExpressions.SequenceContainsWhere: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let (path, inner) = try translator.members(sequence, variable.key, test)
        return .condition(PredicateTranslator.wrap(path.hops[...], inner))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let (path, inner) = try translator.members(sequence, variable.key, test)
        let last = path.hops[path.hops.count - 1]
        return .condition(PredicateTranslator.wrap(path.hops.dropLast(), .not(.related(key: last.name, .not(inner)))))
    }
}

extension PredicateTranslator {
    /// The to-many path of `sequence` and `test` translated for its members, in a scope of its own.
    mutating func members(_ sequence: Any, _ variable: PredicateExpressions.VariableID, _ test: Any) throws
        -> (ModelPath, CVPredicate)
    {
        let base = try term(sequence)
        guard case .path(let path) = base, path.attribute == nil, let last = path.hops.last, last.isToMany else {
            throw unsupported("\(base.description).contains(where:)", "needs a to-many relationship")
        }
        let element = ModelPath(entity: path.entity)
        let inner = try with(variable, as: element, replacingScope: true) { try $0.condition($0.term(test)) }
        return (path, inner)
    }
}

extension PredicateExpressions.RangeExpressionContains: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let bounds = try translator.term(range)
        let item = try translator.term(element)
        // A literal range (`20...30`) and a captured one (`let r = 20...30`) are both a constant range here.
        guard case .constant(.range(let lower, let upper, let closed)) = bounds else {
            throw translator.unsupported("\(bounds.description).contains(...)", "needs a range of values")
        }
        guard case .path(let path) = item, let attribute = path.attribute else {
            throw translator.unsupported("a range's contains(\(item.description))", "needs a key path to an attribute")
        }
        let condition: CVPredicate =
            closed
            ? .between(key: attribute.name, lower, upper)
            : .and([
                .comparison(key: attribute.name, .greaterThanOrEqual, lower),
                .comparison(key: attribute.name, .lessThan, upper),
            ])
        return .condition(translator.onAttribute(path, condition))
    }
}

extension PredicateExpressions.ClosedRange: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.bounds(lower, upper, closed: true)
    }
}

extension PredicateExpressions.Range: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.bounds(lower, upper, closed: false)
    }
}

extension PredicateTranslator {
    mutating func bounds(_ lower: Any, _ upper: Any, closed: Bool) throws -> PredicateTerm {
        guard case .constant(.value(let low?)) = try term(lower), case .constant(.value(let high?)) = try term(upper)
        else { throw unsupported("a range", "its bounds must be values") }
        return .constant(.range(lower: low, upper: high, closed: closed))
    }

    /// A string match of the attribute `base` names with the string value `operand`.
    mutating func stringMatch(
        _ base: Any, _ operand: Any, _ match: CVPredicate.StringMatch, insensitive: Bool, _ name: String
    )
        throws -> PredicateTerm
    {
        let subject = try term(base)
        guard case .path(let path) = subject, let attribute = path.attribute, attribute.type == .string,
            case .constant(.value(.string(let text)?)) = try term(operand)
        else { throw unsupported("\(subject.description).\(name)(...)", "needs a string attribute and a string value") }
        return .condition(
            onAttribute(path, .stringMatch(key: attribute.name, match, text, caseInsensitive: insensitive)))
    }
}

extension PredicateExpressions.CollectionContainsCollection: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.stringMatch(base, other, .contains, insensitive: false, "contains")
    }
}

extension PredicateExpressions.SequenceStartsWith: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.stringMatch(base, prefix, .beginsWith, insensitive: false, "starts(with:)")
    }
}

extension CVPredicateExpressions.CaseInsensitiveContains: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        try translator.stringMatch(root, other, .contains, insensitive: true, "localizedStandardContains")
    }
}

extension CVPredicateExpressions.CaseInsensitiveCompare: TranslatableExpression {
    func translate(_ translator: inout PredicateTranslator) throws -> PredicateTerm {
        let subject = try translator.term(root)
        guard case .path(let path) = subject, path.attribute?.type == .string,
            case .constant(.value(.string(let text)?)) = try translator.term(other)
        else {
            throw translator.unsupported(
                "\(subject.description).caseInsensitiveCompare(...)", "needs a string attribute and a string value")
        }
        return .caseInsensitiveCompare(path, text)
    }
}
