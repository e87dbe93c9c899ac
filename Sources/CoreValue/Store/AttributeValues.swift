import Foundation

/// The attribute names of a row in a fixed order, each with its position: shared by every
/// ``AttributeValues`` of one entity, so that values are kept in an array and read by position instead of
/// hashing a name per value.
///
/// Contexts and stores build one layout per entity, in the order of ``Entity/attributes``; two layouts with
/// the same names in the same order are interchangeable (``hasSameNames(as:)``).
@_spi(StoreImplementation) public final class AttributeLayout: Sendable {
    /// The attribute names, by position.
    public let names: [String]
    private let positions: [String: Int]

    /// A layout of these names, in this order. A name listed twice keeps its first position.
    public init(names: [String]) {
        var unique: [String] = []
        var positions: [String: Int] = Dictionary(minimumCapacity: names.count)
        for name in names where positions[name] == nil {
            positions[name] = unique.count
            unique.append(name)
        }
        self.names = unique
        self.positions = positions
    }

    /// The layout of an entity: its attributes in declaration order.
    public convenience init(_ entity: Entity) {
        self.init(names: entity.attributes.map(\.name))
    }

    /// The one layout of these names that every model index shares, so that the stores' and the contexts'
    /// layouts of an entity are the same object and ``hasSameNames(as:)`` answers by identity (it is asked
    /// per fetched row and per change).
    static func shared(_ entity: Entity) -> AttributeLayout {
        let names = entity.attributes.map(\.name)
        return interned.value(for: names) { _ in AttributeLayout(names: names) }
    }

    // One entry per distinct list of names a process builds a model with; never emptied, so that layouts stay
    // shared by identity across models and contexts. Bounded by the models a program declares; a process that
    // made models with ever new attribute names would grow it (a few hundred bytes per list): none of ours
    // does, and the Modelling article says models are declared, not generated.
    private static let interned = LockedTable<[String], AttributeLayout>()

    /// The number of names.
    public var count: Int { names.count }

    /// The position of a name, or `nil` when the layout has no such name.
    public func position(of name: String) -> Int? { positions[name] }

    /// Whether both layouts list the same names in the same order (then positions mean the same in both).
    public func hasSameNames(as other: AttributeLayout) -> Bool {
        self === other || names == other.names
    }

    static let empty = AttributeLayout(names: [])
}

/// Attribute values by name, stored by position in an ``AttributeLayout``: the values of one row in a
/// ``RowSnapshot``, an ``ObjectChange`` or an object.
///
/// It reads and writes like a `[String: AttributeValue]` (a name without a value reads as `nil`, which is
/// not the same as ``AttributeValue/null``), and a dictionary literal creates one. Values built by a store
/// or a context share their entity's layout, so copying them copies no names and reading one hashes nothing.
@_spi(StoreImplementation)
public struct AttributeValues: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral,
    CustomStringConvertible
{
    /// The names and their positions.
    public private(set) var layout: AttributeLayout
    /// The value at each position of the layout; `nil` where there is none.
    private var slots: [AttributeValue?]
    /// The number of names with a value.
    public private(set) var count: Int

    /// No values, in an empty layout.
    public init() {
        self.init(layout: .empty)
    }

    /// No values yet, in `layout`.
    public init(layout: AttributeLayout) {
        self.layout = layout
        self.slots = Array(repeating: nil, count: layout.count)
        self.count = 0
    }

    /// A value for every name of `layout`, by position.
    ///
    /// `values` must have one element per name; a shorter or longer list keeps what fits and leaves the rest
    /// without a value.
    public init(layout: AttributeLayout, values: [AttributeValue]) {
        self.layout = layout
        if values.count == layout.count {
            self.slots = values
            self.count = values.count
        } else {
            var slots = [AttributeValue?](repeating: nil, count: layout.count)
            for (position, value) in values.prefix(layout.count).enumerated() { slots[position] = value }
            self.slots = slots
            self.count = Swift.min(values.count, layout.count)
        }
    }

    /// A value for every name of `layout`: `complete` has one element per name, none `nil` (what a store's
    /// row reader builds, without a second copy of the array).
    package init(layout: AttributeLayout, complete: [AttributeValue?]) {
        self.layout = layout
        self.slots = complete
        self.count = complete.count
    }

    /// The values of a dictionary, in a layout of its names (sorted).
    public init(_ values: [String: AttributeValue]) {
        let names = values.keys.sorted()
        self.layout = AttributeLayout(names: names)
        self.slots = names.map { values[$0] }
        self.count = names.count
    }

    /// The values of a dictionary literal.
    public init(dictionaryLiteral elements: (String, AttributeValue)...) {
        var values: [String: AttributeValue] = [:]
        for (name, value) in elements { values[name] = value }
        self.init(values)
    }

    /// The value of a name; `nil` when it has none. Setting `nil` removes the value; setting a name the layout
    /// does not have extends the layout.
    public subscript(name: String) -> AttributeValue? {
        get {
            guard let position = layout.position(of: name) else { return nil }
            return slots[position]
        }
        set {
            if let position = layout.position(of: name) {
                self[at: position] = newValue
            } else if let newValue {
                layout = AttributeLayout(names: layout.names + [name])
                slots.append(newValue)
                count += 1
            }
        }
    }

    /// The value at a position of the layout; `nil` when it has none.
    public subscript(at position: Int) -> AttributeValue? {
        get { slots[position] }
        set {
            switch (slots[position] == nil, newValue == nil) {
            case (true, false): count += 1
            case (false, true): count -= 1
            default: break
            }
            slots[position] = newValue
        }
    }

    /// Whether there are no values.
    public var isEmpty: Bool { count == 0 }

    /// Whether every name of the layout has a value.
    public var isComplete: Bool { count == slots.count }

    /// The names with a value, in layout order.
    public var keys: [String] {
        var keys: [String] = []
        keys.reserveCapacity(count)
        for (position, slot) in slots.enumerated() where slot != nil { keys.append(layout.names[position]) }
        return keys
    }

    /// The values as a dictionary.
    public var dictionary: [String: AttributeValue] {
        var result: [String: AttributeValue] = Dictionary(minimumCapacity: count)
        for (name, value) in self { result[name] = value }
        return result
    }

    /// Sets every value of `other`, replacing values already set.
    public mutating func merge(_ other: AttributeValues) {
        if other.layout.hasSameNames(as: layout) {
            if count == 0 {
                // Nothing to keep: take the other's storage as it is (no copy until one of them writes).
                slots = other.slots
                count = other.count
                return
            }
            for (position, slot) in other.slots.enumerated() where slot != nil { self[at: position] = slot }
        } else {
            for (name, value) in other { self[name] = value }
        }
    }

    /// These values with every value of `other` set, replacing values already set.
    public func merging(_ other: AttributeValues) -> AttributeValues {
        var result = self
        result.merge(other)
        return result
    }

    /// The values whose names are in `names`, in the same layout.
    public func keeping(_ names: Set<String>) -> AttributeValues {
        var result = self
        for (position, slot) in slots.enumerated() where slot != nil && !names.contains(layout.names[position]) {
            result[at: position] = nil
        }
        return result
    }

    /// The same values in `target`'s positions (shared storage when the layouts have the same names).
    ///
    /// - Returns: `nil` and the first name `target` does not have, when there is one.
    public func arranged(as target: AttributeLayout) -> (values: AttributeValues?, unknownName: String?) {
        if layout.hasSameNames(as: target) {
            var result = self
            result.layout = target
            return (result, nil)
        }
        var result = AttributeValues(layout: target)
        for (name, value) in self {
            guard let position = target.position(of: name) else { return (nil, name) }
            result[at: position] = value
        }
        return (result, nil)
    }

    /// The name/value pairs with a value, in layout order.
    public struct Iterator: IteratorProtocol {
        let values: AttributeValues
        var position = 0

        /// The next pair with a value.
        public mutating func next() -> (key: String, value: AttributeValue)? {
            while position < values.slots.count {
                defer { position += 1 }
                if let value = values.slots[position] { return (values.layout.names[position], value) }
            }
            return nil
        }
    }

    /// Iterates the name/value pairs with a value, in layout order.
    public func makeIterator() -> Iterator { Iterator(values: self) }

    /// Equal when the same names have the same values, whatever the layouts.
    public static func == (lhs: AttributeValues, rhs: AttributeValues) -> Bool {
        guard lhs.count == rhs.count else { return false }
        if lhs.layout.hasSameNames(as: rhs.layout) { return lhs.slots == rhs.slots }
        for (name, value) in lhs where rhs[name] != value { return false }
        return true
    }

    /// Hashes the name/value pairs regardless of the layout's order.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(count)
        var combined = 0
        for (name, value) in self {
            var pair = Hasher()
            pair.combine(name)
            pair.combine(value)
            combined ^= pair.finalize()
        }
        hasher.combine(combined)
    }

    /// The values as a dictionary literal, sorted by name.
    public var description: String {
        guard count > 0 else { return "[:]" }
        let pairs = self.sorted { $0.key < $1.key }.map { "\"\($0.key)\": \($0.value)" }
        return "[" + pairs.joined(separator: ", ") + "]"
    }
}
