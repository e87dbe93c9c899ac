import Foundation

/// Maps the elements of a Core Data model's `contents` to entities, attributes and relationships, collecting a
/// warning for each thing it leaves out or changes.
struct XcodeModelImporter {
    let file: String
    var warnings: [XcodeModelWarning] = []

    init(file: String) { self.file = file }

    mutating func model(_ root: XMLElement) throws -> ManagedObjectModel {
        var entities: [Entity] = []
        for child in root.children {
            switch child.name {
            case "entity": entities.append(try entity(child))
            case "fetchRequest":
                warn(
                    nil, child.attributes["name"], "fetch request templates are not imported; write the query in Swift")
            case "configuration":
                warn(nil, child.attributes["name"], "configurations are not imported: every entity is in the one store")
            case "elements": warn(nil, nil, "the diagram's layout (<elements>) has no meaning here")
            default: warn(nil, child.name, "<\(child.name)> is not imported")
            }
        }
        return try ManagedObjectModel(entities)
    }

    private mutating func entity(_ element: XMLElement) throws -> Entity {
        let name = try required(element, "name")
        let unique = uniqueAttributes(element, entity: name)
        var attributes: [Attribute] = []
        var relationships: [Relationship] = []
        for child in element.children {
            switch child.name {
            case "attribute":
                if let made = try attribute(child, entity: name, unique: unique) { attributes.append(made) }
            case "relationship": relationships.append(try relationship(child, entity: name))
            case "uniquenessConstraints": continue
            case "fetchIndex":
                warn(name, child.attributes["name"], "fetch indexes are not imported; create the index in a migration")
            case "fetchedProperty": warn(name, child.attributes["name"], "fetched properties are not imported")
            case "userInfo": warn(name, nil, "userInfo is not imported")
            default: warn(name, child.name, "<\(child.name)> is not imported")
            }
        }
        for key in unique.sorted() where !attributes.contains(where: { $0.name == key }) {
            warn(name, key, "is in a uniqueness constraint but is no imported attribute")
        }
        // Xcode writes a subentity's own properties only, as the model declares them: the model resolves
        // what it inherits (and refuses a parent it does not have, naming the entity).
        return Entity(
            name, parent: element.attributes["parentEntity"], abstract: element.flag("isAbstract"),
            attributes: attributes, relationships: relationships)
    }

    /// The attributes that are unique on their own; a constraint over several is a warning.
    private mutating func uniqueAttributes(_ element: XMLElement, entity: String) -> Set<String> {
        var unique: Set<String> = []
        for constraints in element.children("uniquenessConstraints") {
            for constraint in constraints.children("uniquenessConstraint") {
                let names = constraint.children("constraint").compactMap { $0.attributes["value"] }
                if names.count == 1, let only = names.first {
                    unique.insert(only)
                } else {
                    warn(
                        entity, names.joined(separator: "+"),
                        "a uniqueness constraint over several properties is not imported")
                }
            }
        }
        return unique
    }

    private mutating func attribute(_ element: XMLElement, entity: String, unique: Set<String>) throws -> Attribute? {
        let name = try required(element, "name")
        if element.flag("transient") {
            warn(entity, name, "is transient (never stored): not imported")
            return nil
        }
        if let derivation = element.attributes["derivationExpression"] {
            warn(entity, name, "is derived (\(derivation)): not imported")
            return nil
        }
        let typeName = element.attributes["attributeType"] ?? "Undefined"
        guard let type = Self.types[typeName] else {
            warn(entity, name, "has type \(typeName), which has no column type: not imported")
            return nil
        }
        if typeName == "Transformable" {
            let transformer = element.attributes["valueTransformerName"] ?? "the default transformer"
            let kind = element.attributes["customClassName"] ?? "an unnamed class"
            warn(
                entity, name,
                "is Transformable (\(transformer), \(kind)): stored as bytes (bytea), as Core Data's SQLite store keeps "
                    + "it; the struct's property is the transformed Data")
        }
        if element.flag("allowsExternalBinaryDataStorage") {
            warn(entity, name, "allows external storage: stored in its row instead")
        }
        let defaultValue = self.defaultValue(element, type, entity: entity, name: name)
        return Attribute(
            name, type, optional: element.flag("optional"), unique: unique.contains(name), defaultValue: defaultValue,
            preservedAfterDeletion: element.flag("preserveAfterDeletion"))
    }

    /// `defaultValueString` (or, for dates, `defaultDateTimeInterval`, seconds since 2001) as a value.
    private mutating func defaultValue(_ element: XMLElement, _ type: AttributeType, entity: String, name: String)
        -> AttributeValue?
    {
        if type == .date {
            guard let interval = element.attributes["defaultDateTimeInterval"] else { return nil }
            if let seconds = Double(interval) { return .date(Date(timeIntervalSinceReferenceDate: seconds)) }
            warn(entity, name, "default date \(interval) is no number: left out")
            return nil
        }
        guard let text = element.attributes["defaultValueString"] else { return nil }
        let value: AttributeValue?
        switch type {
        case .int16: value = Int16(text).map(AttributeValue.int16)
        case .int32: value = Int32(text).map(AttributeValue.int32)
        case .int64: value = Int64(text).map(AttributeValue.int64)
        case .double: value = Double(text).map(AttributeValue.double)
        case .float: value = Float(text).map(AttributeValue.float)
        case .decimal:
            value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")).map(AttributeValue.decimal)
        case .bool: value = text == "YES" ? .bool(true) : text == "NO" ? .bool(false) : nil
        case .string: value = .string(text)
        case .uuid: value = UUID(uuidString: text).map(AttributeValue.uuid)
        case .uri: value = URL(string: text).map(AttributeValue.uri)
        case .data, .date: value = nil
        }
        if value == nil { warn(entity, name, "default \"\(text)\" is not a \(type.rawValue): left out") }
        return value
    }

    /// The attribute types Xcode writes, by the name in `attributeType`; Transformable is kept as its bytes.
    /// Undefined (transient only), ObjectID and Composite have no column type.
    private static let types: [String: AttributeType] = [
        "Integer 16": .int16, "Integer 32": .int32, "Integer 64": .int64, "Decimal": .decimal, "Double": .double,
        "Float": .float, "String": .string, "Boolean": .bool, "Date": .date, "Binary": .data, "UUID": .uuid,
        "URI": .uri, "Transformable": .data,
    ]

    private mutating func relationship(_ element: XMLElement, entity: String) throws -> Relationship {
        let name = try required(element, "name")
        let destination = try required(element, "destinationEntity")
        let toMany = element.flag("toMany")
        let kind: Relationship.Kind = toMany ? (element.flag("ordered") ? .orderedToMany : .unorderedToMany) : .toOne
        let rule: Relationship.DeleteRule
        switch element.attributes["deletionRule"] ?? "Nullify" {
        case "Cascade": rule = .cascade
        case "Deny": rule = .deny
        case "Nullify": rule = .nullify
        case "No Action": rule = .noAction
        case let other:
            rule = .nullify
            warn(entity, name, "delete rule \(other) is imported as Nullify (the store keeps no dangling links)")
        }
        if toMany, element.attributes["minCount"] != nil || element.attributes["maxCount"] != nil {
            warn(entity, name, "minimum and maximum counts are not checked")
        }
        if !toMany, !element.flag("optional") {
            warn(entity, name, "is a required to-one: not checked (a to-one may be empty)")
        }
        return Relationship(name, to: destination, kind, inverse: element.attributes["inverseName"], deleteRule: rule)
    }

    private func required(_ element: XMLElement, _ key: String) throws -> String {
        guard let value = element.attributes[key], !value.isEmpty else {
            throw XcodeModelError(file: file, message: "<\(element.name)> at line \(element.line) has no \(key)")
        }
        return value
    }

    private mutating func warn(_ entity: String?, _ property: String?, _ message: String) {
        warnings.append(XcodeModelWarning(entity: entity, property: property, message: message))
    }
}
