import Foundation

/// Translates a Foundation `Predicate` over a user's struct into a ``CVPredicate`` on the struct's entity,
/// before any store call: pure code, expression tree in, predicate out.
///
/// The translation keeps Swift's meaning, where a comparison is true or false and never unknown:
/// `$0.position != "Lead"` holds for a `nil` position, and `!($0.position == "Lead")` is the same predicate.
/// Each comparison on an optional attribute or through a to-one relationship is written so that a missing
/// value makes it false, never SQL's unknown, so negations and both stores agree with `Predicate.evaluate`.
/// An expression with no translation throws ``CVManagedStructError/Code/unsupportedPredicate``, naming it.
struct PredicateTranslator {
    let model: ManagedObjectModel
    let root: Entity
    /// What each closure variable in scope stands for.
    private var variables: [PredicateExpressions.VariableID: ModelPath] = [:]
    private var depth = 0

    init(model: ManagedObjectModel, root: Entity) {
        self.model = model
        self.root = root
    }

    /// The predicate as a ``CVPredicate`` on `root`.
    ///
    /// - Throws: ``CVManagedStructError/Code/unsupportedPredicate`` or ``CVManagedStructError/Code/nestingTooDeep``.
    static func translate<T>(_ predicate: Predicate<T>, model: ManagedObjectModel, entity: Entity) throws -> CVPredicate
    {
        var translator = PredicateTranslator(model: model, root: entity)
        translator.variables[predicate.variable.key] = ModelPath(entity: entity)
        return try translator.condition(translator.term(predicate.expression))
    }

    /// A sort descriptor on `T` as a ``CVSortDescriptor``: a stored attribute of `T`'s entity.
    static func translate<T>(_ descriptor: SortDescriptor<T>, entity: Entity) throws -> CVSortDescriptor {
        guard let keyPath = descriptor.keyPath, let name = FieldNames.name(of: keyPath, in: T.self),
            entity.attribute(named: name) != nil
        else {
            throw CVManagedStructError.unsupportedPredicate(
                entity: entity.name, what: "a sort descriptor",
                message: "only a stored property of \(T.self) that is an attribute of the entity can be sorted by")
        }
        return CVSortDescriptor(key: name, ascending: descriptor.order == .forward)
    }

    // MARK: Walking the tree

    /// The term of one expression node. Recursion follows the expression's nesting, bounded by
    /// ``CVPredicate/maximumDepth`` levels (a decoded predicate can nest as deep as its input).
    mutating func term(_ expression: Any) throws -> PredicateTerm {
        guard let node = expression as? any TranslatableExpression else {
            throw unsupported(Self.describe(expression), "it has no SQL translation")
        }
        depth += 1
        defer { depth -= 1 }
        guard depth <= CVPredicate.maximumDepth * 2 else {
            throw CVManagedStructError.nestingTooDeep(
                entity: root.name, what: "a predicate expression", limit: CVPredicate.maximumDepth * 2)
        }
        return try node.translate(&self)
    }

    /// Translates `body` with `variable` standing for `path`, then forgets it.
    mutating func with<R>(
        _ variable: PredicateExpressions.VariableID, as path: ModelPath, replacingScope: Bool,
        _ body: (inout PredicateTranslator) throws -> R
    ) rethrows -> R {
        let saved = variables
        if replacingScope { variables.removeAll() }
        variables[variable] = path
        defer { variables = saved }
        return try body(&self)
    }

    func path(of variable: PredicateExpressions.VariableID) throws -> ModelPath {
        guard let path = variables[variable] else {
            throw unsupported(
                "a variable of an enclosing closure", "a closure of `contains(where:)` may only use its own element")
        }
        return path
    }

    func unsupported(_ what: String, _ message: String) -> CVManagedStructError {
        CVManagedStructError.unsupportedPredicate(entity: root.name, what: what, message: message)
    }

    /// A short name for an expression type: `Arithmetic`, not its whole generic signature.
    static func describe(_ expression: Any) -> String {
        let name = String(describing: type(of: expression))
        return String(name.prefix { $0 != "<" })
    }

    // MARK: Terms to conditions

    /// A term used as a condition: a condition, a Bool attribute, or a Bool constant.
    func condition(_ term: PredicateTerm) throws -> CVPredicate {
        switch term {
        case .condition(let condition): return condition
        case .path(let path):
            if let attribute = path.attribute, attribute.type == .bool {
                return onAttribute(path, .comparison(key: attribute.name, .equal, .bool(true)))
            }
        case .constant(.value(.bool(let value)?)): return value ? .true : .false
        default: break
        }
        throw unsupported(term.description, "is not a condition")
    }

    /// `condition` on the attribute `path` ends at, false when any relationship on the way is empty or the
    /// attribute is null.
    func onAttribute(_ path: ModelPath, _ condition: CVPredicate) -> CVPredicate {
        guard let attribute = path.attribute else { return condition }
        let inner = attribute.isOptional ? Self.and([.not(.isNull(key: attribute.name)), condition]) : condition
        return Self.wrap(path.hops[...], inner)
    }

    /// Whether the path has a value: every relationship on the way has an object, and the attribute (if the
    /// path ends at one) is not null.
    func present(_ path: ModelPath) throws -> CVPredicate {
        if path.attribute != nil { return onAttribute(path, .true) }
        guard let last = path.hops.last else { return .true }
        guard !last.isToMany else { throw unsupported(path.name, "a to-many relationship is not a value") }
        return Self.wrap(path.hops.dropLast(), .not(.isNull(key: last.name)))
    }

    /// `inner` on the entity the relationships lead to, nested one `related` per relationship.
    static func wrap(_ hops: ArraySlice<Relationship>, _ inner: CVPredicate) -> CVPredicate {
        var result = inner
        for hop in hops.reversed() { result = .related(key: hop.name, result) }
        return result
    }

    /// All of `parts`, flattened, without the `.true`s; `.false` if any is.
    static func and(_ parts: [CVPredicate]) -> CVPredicate { combine(parts, conjunction: true) }

    /// Any of `parts`, flattened, without the `.false`s; `.true` if any is.
    static func or(_ parts: [CVPredicate]) -> CVPredicate { combine(parts, conjunction: false) }

    private static func combine(_ parts: [CVPredicate], conjunction: Bool) -> CVPredicate {
        let (neutral, absorbing): (CVPredicate, CVPredicate) = conjunction ? (.true, .false) : (.false, .true)
        var flat: [CVPredicate] = []
        for part in parts {
            switch (part, conjunction) {
            case (neutral, _): continue
            case (absorbing, _): return absorbing
            case (.and(let inner), true), (.or(let inner), false): flat.append(contentsOf: inner)
            default: flat.append(part)
            }
        }
        if flat.count == 1 { return flat[0] }
        return conjunction ? .and(flat) : .or(flat)
    }

    // MARK: Comparisons

    /// `lhs op rhs` for `==` (op `.equal`), `!=` (`.notEqual`) and the orderings.
    func compare(_ lhs: PredicateTerm, _ op: CVPredicate.ComparisonOperator, _ rhs: PredicateTerm) throws -> CVPredicate
    {
        if case .constant = lhs, !rhs.isConstant { return try compare(rhs, op.flipped, lhs) }
        if op == .notEqual { return .not(try compare(lhs, .equal, rhs)) }
        switch (lhs, rhs) {
        case (.path(let path), .constant(.value(let value))):
            guard let value else {
                guard op == .equal else { throw unsupported(path.name, "an ordering with nil") }
                return .not(try present(path))
            }
            guard let attribute = path.attribute else {
                throw unsupported(path.name, "an object compared with a value (compare one of its attributes)")
            }
            return onAttribute(path, .comparison(key: attribute.name, op, value))
        case (.coalesced(let path, let fallback), .constant(.value(let value?))):
            guard let attribute = path.attribute else { throw unsupported(path.name, "?? on an object") }
            let stored = onAttribute(path, .comparison(key: attribute.name, op, value))
            // The default stands in when the value is missing: its comparison is known now.
            guard let fallback, PredicateEvaluator.holds(fallback, op, value) else { return stored }
            return Self.or([stored, .not(try present(path))])
        case (.caseInsensitiveCompare(let path, let text), .constant(.comparisonResult(let result))):
            guard op == .equal, result == .orderedSame, let attribute = path.attribute else {
                throw unsupported("caseInsensitiveCompare", "only `== .orderedSame` has a translation")
            }
            let pattern = CVPredicate.escapeLike(text)
            return onAttribute(path, .stringMatch(key: attribute.name, .like, pattern, caseInsensitive: true))
        case (.condition(let condition), .constant(.value(.bool(let value)?))):
            guard op == .equal else { throw unsupported("a condition", "an ordering of Bool values") }
            return value ? condition : .not(condition)
        case (.optionalCondition(let condition, let present), .constant(.value(let value))):
            guard op == .equal else { throw unsupported("an optional condition", "an ordering of Bool values") }
            switch value {
            case .bool(true)?: return condition
            case .bool(false)?: return Self.and([present, .not(condition)])
            case nil: return .not(present)
            default: throw unsupported("an optional condition", "compared with a value that is not a Bool")
            }
        case (.constant(.value(let left)), .constant(.value(let right))):
            switch (left, right) {
            case (nil, nil): return op == .equal ? .true : .false
            case (let left?, let right?): return PredicateEvaluator.holds(left, op, right) ? .true : .false
            default: return op == .equal ? .false : .true
            }
        default:
            throw unsupported(
                "\(lhs.description) \(op.rawValue) \(rhs.description)",
                "a comparison needs a key path on one side and a value on the other")
        }
    }
}

extension CVPredicate.ComparisonOperator {
    /// The operator with its operands swapped: `a < b` is `b > a`.
    var flipped: Self {
        switch self {
        case .lessThan: return .greaterThan
        case .lessThanOrEqual: return .greaterThanOrEqual
        case .greaterThan: return .lessThan
        case .greaterThanOrEqual: return .lessThanOrEqual
        case .equal, .notEqual: return self
        }
    }
}

/// Where a key path stands: the relationships followed from a closure variable's entity, and the attribute
/// it ends at (none while it names an object).
struct ModelPath {
    var hops: [Relationship] = []
    var entity: Entity
    var attribute: Attribute?
    var components: [String] = []

    init(entity: Entity) { self.entity = entity }

    var name: String { "\\." + components.joined(separator: ".") }
}

/// What an expression node stands for while a predicate is translated.
enum PredicateTerm: CustomStringConvertible {
    case condition(CVPredicate)
    case path(ModelPath)
    case constant(PredicateConstant)
    /// `path ?? fallback`.
    case coalesced(ModelPath, AttributeValue?)
    /// An optional Bool: `condition` when a value is present (`present`), `nil` otherwise, as optional
    /// chaining into a Bool gives (`$0.position?.contains("x")`). `condition` implies `present`.
    case optionalCondition(CVPredicate, present: CVPredicate)
    /// `path.caseInsensitiveCompare(text)`, before it is compared with a result.
    case caseInsensitiveCompare(ModelPath, String)

    var isConstant: Bool {
        if case .constant = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .condition: return "a condition"
        case .path(let path): return path.name
        case .constant: return "a value"
        case .coalesced(let path, _): return "\(path.name) ?? a value"
        case .caseInsensitiveCompare(let path, _): return "\(path.name).caseInsensitiveCompare(...)"
        case .optionalCondition: return "an optional condition"
        }
    }
}

/// A value of the user's, converted for the store.
enum PredicateConstant {
    /// One value; `nil` for `nil`.
    case value(AttributeValue?)
    /// The elements of an array or set.
    case list([AttributeValue?])
    case comparisonResult(ComparisonResult)
    case range(lower: AttributeValue, upper: AttributeValue, closed: Bool)

    /// Converts a Swift value: an ``AttributeValueConvertible`` value, an enum by its raw value, an
    /// optional, an array or set of those, a range of those, or a `ComparisonResult`.
    init?(_ value: Any) {
        if let result = value as? ComparisonResult {
            self = .comparisonResult(result)
        } else if let single = Self.single(value) {
            self = .value(single)
        } else if let range = value as? any ConstantRange, let bounds = range.constantBounds {
            self = .range(lower: bounds.lower, upper: bounds.upper, closed: bounds.closed)
        } else if let sequence = value as? any Sequence {
            var values: [AttributeValue?] = []
            for element in sequence {
                guard let single = Self.single(element) else { return nil }
                values.append(single)
            }
            self = .list(values)
        } else {
            return nil
        }
    }

    /// One value as an attribute value: `.some(nil)` for `nil`, `nil` when it has no conversion.
    static func single(_ value: Any) -> AttributeValue?? {
        if let optional = value as? any OptionalValue {
            guard let wrapped = optional.wrappedAny else { return .some(nil) }
            return single(wrapped)
        }
        if let convertible = value as? any AttributeValueConvertible { return .some(convertible.attributeValue) }
        if let raw = value as? any RawRepresentable { return single(raw.rawValue) }
        return nil
    }
}

/// An `Optional` seen through `Any`.
protocol OptionalValue {
    var wrappedAny: Any? { get }
}

extension Optional: OptionalValue {
    var wrappedAny: Any? {
        switch self {
        case .some(let value): return value
        case .none: return nil
        }
    }
}

/// A range of attribute values seen through `Any`.
protocol ConstantRange {
    var constantBounds: (lower: AttributeValue, upper: AttributeValue, closed: Bool)? { get }
}

extension ClosedRange: ConstantRange {
    var constantBounds: (lower: AttributeValue, upper: AttributeValue, closed: Bool)? {
        guard let lower = PredicateConstant.single(lowerBound) ?? nil,
            let upper = PredicateConstant.single(upperBound) ?? nil
        else { return nil }
        return (lower, upper, true)
    }
}

extension Range: ConstantRange {
    var constantBounds: (lower: AttributeValue, upper: AttributeValue, closed: Bool)? {
        guard let lower = PredicateConstant.single(lowerBound) ?? nil,
            let upper = PredicateConstant.single(upperBound) ?? nil
        else { return nil }
        return (lower, upper, false)
    }
}

extension CVPredicate {
    /// Escapes `\`, `%` and `_` (per Unicode scalar, as the server reads a pattern) so that a `LIKE` pattern
    /// matches `text` literally.
    package static func escapeLike(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "%" || scalar == "_" { result.append("\\") }
            result.append(scalar)
        }
        return String(result)
    }
}
