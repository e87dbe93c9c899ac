@_spi(StoreImplementation) import CoreValue

/// Encodes a streamed save's parts as binary COPY rows of one entity: each row gets the next reserved key
/// and the first version, and the result records both (see ``WriteStrategy/copy(_:_:_:)``).
struct CopyRows {
    let entity: Entity
    /// The keys reserved for the stream, in order.
    let keys: [Int64]
    /// Rows encoded so far: the next reserved key's index, and the next stream position.
    private(set) var written = 0
    private(set) var result = SaveResult()
    private var buffer: [UInt8] = []
    private let fieldCount: Int16

    init(entity: Entity, keys: [Int64]) {
        self.entity = entity
        self.keys = keys
        // The key, the version and the attributes: the store only picks COPY when this fits.
        fieldCount = Int16(clamping: entity.attributes.count + 2)
    }

    /// The COPY data of one part (valid until the next call): its rows in the order handed over.
    ///
    /// - Throws: `CVManagedStructError.invalidObject` for a part inserting another entity or by another key
    ///   than `upserts` announced, or for more rows than it announced.
    mutating func encode(_ plan: SavePlan, insertCount: Int, upserts: StreamedUpserts) throws -> [UInt8] {
        // One group in the order handed over: recorded by stream position, as `SaveExecution.sendInserts` does.
        let positional = plan.inserts.count == 1 && plan.insertCount == insertCount
        result.streamedInserts.append(contentsOf: repeatElement(nil, count: plan.insertCount))
        buffer.removeAll(keepingCapacity: true)
        for group in plan.inserts {
            guard group.entity.name == entity.name, group.upsertKey.map({ $0.name == upserts.key }) ?? true else {
                throw CVManagedStructError.invalidObject(
                    message: "a streamed save announced upserts of \(entity.name) by '\(upserts.key)'; a part "
                        + "inserts \(group.entity.name) rows by '\(group.upsertKey?.name ?? "none")'")
            }
            for row in group.rows {
                guard written < keys.count else {
                    throw CVManagedStructError.invalidObject(
                        message: "a streamed save announced at most \(upserts.count) rows; its parts hold more")
                }
                let key = keys[written]
                ArrayEncoding.appendFieldCount(fieldCount, to: &buffer)
                try ArrayEncoding.appendElement(.int64(key), as: .int64, to: &buffer)
                try ArrayEncoding.appendElement(.int64(1), as: .int64, to: &buffer)
                for (position, attribute) in entity.attributes.enumerated() {
                    let value = row.attributes[at: position] ?? attribute.defaultValue ?? .null
                    try ArrayEncoding.appendElement(value, as: attribute.type, to: &buffer)
                }
                if positional {
                    result.streamedInserts[written] = SaveResult.StoredRow(primaryKey: key, version: 1)
                } else {
                    let permanent = ManagedObjectID.permanent(entity.name, key)
                    result.permanentIDs[row.id] = permanent
                    result.versions[permanent] = 1
                }
                written += 1
            }
        }
        return buffer
    }
}
