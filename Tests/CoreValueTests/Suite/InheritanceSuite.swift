@_spi(StoreImplementation) import CoreValue
import Foundation
import Testing

/// Entity inheritance (issue 31, point 2) on any store: a three-level hierarchy under an abstract root
/// (`Media` > `Photo` > `RawPhoto`, `Media` > `Video`), and an `Album` whose ordered to-many and to-one point
/// at the abstract root. `Photo` and `Video` each declare `width` (siblings' attributes of one name and type,
/// as Core Data allows: one column on PostgreSQL). The cases take a factory of stores for ``model``.
enum InheritanceSuite {
    static let model: ManagedObjectModel = {
        do { return try makeModel() } catch { preconditionFailure("the inheritance test model is invalid: \(error)") }
    }()

    static func makeModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Media", abstract: true) {
                Attribute("code", .string, unique: true)
                Attribute("title", .string)
                Relationship("album", to: "Album", inverse: "items")
            }
            Entity("Photo", parent: "Media") { Attribute("width", .int64) }
            Entity("RawPhoto", parent: "Photo") { Attribute("sensor", .string) }
            Entity("Video", parent: "Media") {
                Attribute("seconds", .double)
                Attribute("width", .int64)
            }
            Entity("Album") {
                Attribute("name", .string, unique: true)
                Relationship("items", to: "Media", .orderedToMany, inverse: "album", deleteRule: .cascade)
                Relationship("cover", to: "Media")
            }
        }
    }

    struct Photo: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Photo"
        static let IdentifierName = "code"
        func IdentifierValue() -> IdentifierType { code }
        var code: String
        var title: String
        var width: Int64

        static func fromObject(_ o: ManagedObject) throws -> Photo {
            try curry(self.init) <^> o <| "code" <^> o <| "title" <^> o <| "width"
        }
    }

    struct RawPhoto: CVManagedUniqueStruct, Equatable {
        static let EntityName = "RawPhoto"
        static let IdentifierName = "code"
        func IdentifierValue() -> IdentifierType { code }
        var code: String
        var title: String
        var width: Int64
        var sensor: String

        static func fromObject(_ o: ManagedObject) throws -> RawPhoto {
            try curry(self.init) <^> o <| "code" <^> o <| "title" <^> o <| "width" <^> o <| "sensor"
        }
    }

    struct Video: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Video"
        static let IdentifierName = "code"
        func IdentifierValue() -> IdentifierType { code }
        var code: String
        var title: String
        var width: Int64
        var seconds: Double

        static func fromObject(_ o: ManagedObject) throws -> Video {
            try curry(self.init) <^> o <| "code" <^> o <| "title" <^> o <| "width" <^> o <| "seconds"
        }
    }

    /// The parent's struct: the keys every subentity shares, read from an object of any of them.
    struct MediaSummary: CVManagedStruct, Equatable {
        static let EntityName = "Media"
        var code: String
        var title: String

        static func fromObject(_ o: ManagedObject) throws -> MediaSummary {
            try curry(self.init) <^> o <| "code" <^> o <| "title"
        }
    }

    /// Each object read as its own entity's struct, dispatched on the object's entity; boxed (in a
    /// relationship) as the struct it holds.
    enum AnyMedia: CVManagedStruct, BoxingVariant, Equatable {
        static let EntityName = "Media"
        case photo(Photo)
        case rawPhoto(RawPhoto)
        case video(Video)

        var boxedStruct: any BoxingStruct {
            switch self {
            case .photo(let photo): photo
            case .rawPhoto(let raw): raw
            case .video(let video): video
            }
        }

        static func fromObject(_ o: ManagedObject) throws -> AnyMedia {
            switch o.entity.name {
            case Photo.EntityName: return .photo(try Photo.fromObject(o))
            case RawPhoto.EntityName: return .rawPhoto(try RawPhoto.fromObject(o))
            case Video.EntityName: return .video(try Video.fromObject(o))
            default:
                throw CVManagedStructError.typeMismatch(
                    entity: "Media", key: "objectID", expected: "Photo, RawPhoto or Video", found: o.entity.name)
            }
        }
    }

    /// An album with its items as their own structs: to-many and to-one relationships to the abstract root.
    struct AlbumView: CVManagedUniqueStruct, Equatable {
        static let EntityName = "Album"
        static let IdentifierName = "name"
        func IdentifierValue() -> IdentifierType { name }
        var name: String
        var items: [AnyMedia]
        var cover: AnyMedia?

        static func fromObject(_ o: ManagedObject) throws -> AlbumView {
            try curry(self.init) <^> o <| "name" <^> o <|| "items" <^> o <|? "cover"
        }
    }

    static let photo = Photo(code: "p1", title: "Beach", width: 640)
    static let raw = RawPhoto(code: "r1", title: "Alps", width: 6_000, sensor: "CMOS")
    static let video = Video(code: "v1", title: "Concert", width: 1_920, seconds: 90.5)

    /// Saves one object of each subentity, in the order photo, video, raw photo.
    static func saveOneOfEach(_ store: any Store, _ api: APIMode) async throws {
        let context = ManagedObjectContext(store: store)
        try await photo.save(context, via: api)
        try await video.save(context, via: api)
        try await raw.save(context, via: api)
    }

    static func names(_ objects: [ManagedObject]) -> [String] { objects.map(\.entity.name) }

    // The synchronous context API, called from the cases' async closures (where the async forms of the same
    // names would be chosen).
    static func fetch(_ context: ManagedObjectContext, _ request: FetchRequest) throws -> [ManagedObject] {
        try context.fetch(request)
    }
    static func count(_ context: ManagedObjectContext, _ request: FetchRequest) throws -> Int {
        try context.count(for: request)
    }
    static func save(_ context: ManagedObjectContext) throws { try context.save() }
    static func delete(_ context: ManagedObjectContext, _ object: ManagedObject) throws { try context.delete(object) }
    static func aggregate(_ context: ManagedObjectContext, _ request: AggregateRequest) throws -> [AggregateRow] {
        try context.aggregate(request)
    }
    static func batchUpdate(_ context: ManagedObjectContext, _ request: BatchUpdateRequest) throws -> BatchResult {
        try context.batchUpdate(request)
    }
    static func batchDelete(_ context: ManagedObjectContext, _ request: BatchDeleteRequest) throws -> BatchResult {
        try context.batchDelete(request)
    }

    /// History of a hierarchy's objects: each change names its object's own entity, and a delete's tombstone
    /// keeps the inherited unique attribute (read from the hierarchy's table on PostgreSQL).
    static func checkHistory(_ store: any HistoryStore) throws {
        let context = ManagedObjectContext(store: store)
        try photo.save(context)
        try video.save(context)
        try photo.delete(context)
        let history = try store.history(after: nil, limit: 10)
        #expect(history.count == 3)
        let changes = history.flatMap(\.changes)
        // A unique struct's save is an upsert, recorded as an update (as for any unique entity).
        #expect(changes.map(\.kind) == [.update, .update, .delete])
        #expect(changes.map(\.objectID.entityName) == ["Photo", "Video", "Photo"])
        #expect(changes.last?.tombstone == ["code": .string("p1")])
    }

    static let cases: [SuiteCase] = [
        SuiteCase("each subentity inserts; a fetch of the abstract root returns all of them in key order") {
            make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            let context = ManagedObjectContext(store: store)
            let all = try fetch(context, FetchRequest(entityName: "Media"))
            #expect(names(all) == ["Photo", "Video", "RawPhoto"])
            // Each ID names the row's own entity, and a hierarchy's keys are distinct.
            #expect(all.map(\.objectID.entityName) == ["Photo", "Video", "RawPhoto"])
            #expect(Set(all.compactMap(\.objectID.primaryKey)).count == 3)
            let sorted = try fetch(context, FetchRequest(entityName: "Media", sortDescriptors: [.init(key: "title")]))
            #expect(sorted.map { try? $0.value(forKey: "title", as: String.self) } == ["Alps", "Beach", "Concert"])
            let window = try fetch(
                context,
                FetchRequest(entityName: "Media", sortDescriptors: [.init(key: "title")], fetchLimit: 1, fetchOffset: 1)
            )
            #expect(names(window) == ["Photo"])
            #expect(try count(context, FetchRequest(entityName: "Media")) == 3)
            #expect(try count(context, FetchRequest(entityName: "Photo")) == 2)
        },
        SuiteCase("includesSubentities false returns only the entity's own objects") { make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            let context = ManagedObjectContext(store: store)
            #expect(names(try fetch(context, FetchRequest(entityName: "Photo"))) == ["Photo", "RawPhoto"])
            let own = try fetch(context, FetchRequest(entityName: "Photo", includesSubentities: false))
            #expect(names(own) == ["Photo"])
            #expect(try fetch(context, FetchRequest(entityName: "Media", includesSubentities: false)).isEmpty)
            #expect(try count(context, FetchRequest(entityName: "Photo", includesSubentities: false)) == 1)
        },
        SuiteCase("inserting an abstract entity is a typed error") { make, api in
            let store = try make()
            let context = ManagedObjectContext(store: store)
            #expect { try context.insert(entityName: "Media") } throws: { hasCode($0, .abstractEntity) }
            await #expect {
                _ = try await MediaSummary(code: "m", title: "t").toObject(context, via: api)
            } throws: { hasCode($0, .abstractEntity) }
            #expect(!context.hasChanges)
            // The store refuses it too, whatever sends it.
            let insert = ObjectChange(
                id: .temporary("Media"), attributes: AttributeValues(["code": .string("m"), "title": .string("t")]))
            #expect { _ = try store.apply(ChangeSet(inserts: [insert])) } throws: { hasCode($0, .abstractEntity) }
            #expect(try fetch(ManagedObjectContext(store: store), FetchRequest(entityName: "Media")).isEmpty)
        },
        SuiteCase("the struct API round-trips each subentity and reads the parent as a summary or an enum") {
            make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            let context = ManagedObjectContext(store: store)
            let photos: [Photo] = try await Photo.query(context, predicate: nil, via: api)
            // A fetch of Photo returns the raw photo too, which reads as a Photo: its shared keys.
            #expect(photos == [photo, Photo(code: raw.code, title: raw.title, width: raw.width)])
            let raws: [RawPhoto] = try await RawPhoto.query(context, predicate: nil, via: api)
            #expect(raws == [raw])
            let videos: [Video] = try await Video.query(context, predicate: nil, via: api)
            #expect(videos == [video])
            let summaries: [MediaSummary] = try await MediaSummary.query(
                context, predicate: nil, sortDescriptors: [.init(key: "code")], via: api)
            #expect(summaries.map(\.code) == ["p1", "r1", "v1"])
            let items: [AnyMedia] = try await AnyMedia.query(context, predicate: nil, via: api)
            #expect(items == [.photo(photo), .video(video), .rawPhoto(raw)])
        },
        SuiteCase("predicates, #Predicate too, work on inherited keys") { make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            let context = ManagedObjectContext(store: store)
            let wide: [Photo] = try await Photo.query(context, predicate: .key("width") > 1_000, via: api)
            #expect(wide.map(\.code) == ["r1"])
            let byTitle: [AnyMedia] = try await AnyMedia.query(context, predicate: .key("title") == "Concert", via: api)
            #expect(byTitle == [.video(video)])
            let typed = try await Photo.query(context, predicate: #Predicate<Photo> { $0.title == "Beach" })
            #expect(typed == [photo])
            let onParent = try await MediaSummary.query(
                context, predicate: #Predicate<MediaSummary> { $0.title != "Beach" }, sortBy: [SortDescriptor(\.title)])
            #expect(onParent.map(\.code) == ["r1", "v1"])
            #expect(try await MediaSummary.count(context, predicate: #Predicate<MediaSummary> { $0.code == "p1" }) == 1)
            // A key only a subentity has is no key of its parent.
            #expect {
                _ = try fetch(context, FetchRequest(entityName: "Media", predicate: .key("width") > 1))
            } throws: {
                hasCode($0, .unknownKey)
            }
        },
        SuiteCase("a fetch of the parent includes unsaved objects of its subentities") { make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            let context = ManagedObjectContext(store: store)
            let pending = try context.insert(entityName: "Video")
            try pending.setValue("v2", forKey: "code")
            try pending.setValue("Aria", forKey: "title")
            try pending.setValue(Int64(720), forKey: "width")
            try pending.setValue(3.0, forKey: "seconds")
            let all = try fetch(context, FetchRequest(entityName: "Media", sortDescriptors: [.init(key: "title")]))
            #expect(all.map { try? $0.value(forKey: "code", as: String.self) } == ["r1", "v2", "p1", "v1"])
            let photos = try fetch(context, FetchRequest(entityName: "Photo"))
            #expect(names(photos) == ["Photo", "RawPhoto"])
        },
        SuiteCase("an ordered to-many and a to-one to the abstract root hold objects of every subentity") {
            make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            do {
                let context = ManagedObjectContext(store: store)
                let media = try fetch(context, FetchRequest(entityName: "Media"))
                let album = try context.insert(entityName: "Album")
                try album.setValue("Trip", forKey: "name")
                // Raw photo, photo, video: not key order.
                try album.setObjects([media[2], media[0], media[1]], forKey: "items")
                try album.setObject(media[1], forKey: "cover")
                try save(context)
            }
            let context = ManagedObjectContext(store: store)
            let albums: [AlbumView] = try await AlbumView.query(context, predicate: nil, via: api)
            #expect(
                albums == [
                    AlbumView(
                        name: "Trip", items: [.rawPhoto(raw), .photo(photo), .video(video)], cover: .video(video))
                ])
            // The inverse, inherited by every subentity, points back.
            let fresh = ManagedObjectContext(store: store)
            for object in try fetch(fresh, FetchRequest(entityName: "Media")) {
                #expect(try object.object(forKey: "album")?.value(forKey: "name", as: String.self) == "Trip")
            }
            // A predicate through the relationship on an inherited key.
            let inTrip: [AnyMedia] = try await AnyMedia.query(
                fresh, predicate: .related(key: "album", .key("name") == "Trip"), sortDescriptors: [.init(key: "code")],
                via: api)
            #expect(inTrip.count == 3)
        },
        SuiteCase("a struct's relationships to the abstract root save each variant as its own entity") { make, api in
            let store = try make()
            let album = AlbumView(
                name: "Trip", items: [.rawPhoto(raw), .photo(photo), .video(video)], cover: .video(video))
            try await album.save(ManagedObjectContext(store: store), via: api)
            let context = ManagedObjectContext(store: store)
            let albums: [AlbumView] = try await AlbumView.query(context, predicate: nil, via: api)
            #expect(albums == [album])
            // One row per item, of its own entity (the order keys are handed out in is the store's plan).
            #expect(
                names(try fetch(context, FetchRequest(entityName: "Media"))).sorted() == ["Photo", "RawPhoto", "Video"])
            // Saved again with one item fewer: the unique items keep their rows, the dropped one is unlinked.
            var fewer = album
            fewer.items.removeFirst()
            try await fewer.save(ManagedObjectContext(store: store), via: api)
            let reread: [AlbumView] = try await AlbumView.query(
                ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(reread == [fewer])
            #expect(try count(ManagedObjectContext(store: store), FetchRequest(entityName: "Media")) == 3)
        },
        SuiteCase("aggregates, batch updates and batch deletes of a parent cover its subentities") { make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            let context = ManagedObjectContext(store: store)
            let counted = try aggregate(context, AggregateRequest(entityName: "Media", .countRows, of: nil))
            #expect(counted.map(\.value) == [.int64(3)])
            let latest = try aggregate(context, AggregateRequest(entityName: "Media", .maximum, of: "title"))
            #expect(latest.map(\.value) == [.string("Concert")])
            let widths = try aggregate(context, AggregateRequest(entityName: "Photo", .sum, of: "width"))
            #expect(widths.map(\.value) == [.int64(6_640)])
            // Photo's batch update reaches the raw photo too, and leaves the video alone.
            let updated = try batchUpdate(
                context, BatchUpdateRequest(entityName: "Photo", values: ["title": .string("Same")]))
            #expect(updated.count == 2)
            let titles = try fetch(
                ManagedObjectContext(store: store),
                FetchRequest(entityName: "Media", sortDescriptors: [.init(key: "code")])
            ).map { try? $0.value(forKey: "title", as: String.self) }
            #expect(titles == ["Same", "Same", "Concert"])
            let deleted = try batchDelete(
                ManagedObjectContext(store: store),
                BatchDeleteRequest(entityName: "Media", predicate: .key("title") == "Same"))
            #expect(deleted.count == 2)
            #expect(
                names(try fetch(ManagedObjectContext(store: store), FetchRequest(entityName: "Media"))) == ["Video"])
        },
        SuiteCase("delete rules apply across the hierarchy") { make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            do {
                let context = ManagedObjectContext(store: store)
                let media = try fetch(context, FetchRequest(entityName: "Media"))
                let album = try context.insert(entityName: "Album")
                try album.setValue("Trip", forKey: "name")
                try album.setObjects(media, forKey: "items")
                try album.setObject(media[1], forKey: "cover")
                try save(context)
            }
            // Deleting a member (a video) unlinks it: out of the list, and the to-one reads as nil.
            do {
                let context = ManagedObjectContext(store: store)
                for video in try fetch(context, FetchRequest(entityName: "Video")) { try delete(context, video) }
                try save(context)
            }
            do {
                let context = ManagedObjectContext(store: store)
                let albums: [AlbumView] = try await AlbumView.query(context, predicate: nil, via: api)
                #expect(albums == [AlbumView(name: "Trip", items: [.photo(photo), .rawPhoto(raw)], cover: nil)])
            }
            // Deleting the album cascades to its items, of every subentity.
            let context = ManagedObjectContext(store: store)
            for album in try fetch(context, FetchRequest(entityName: "Album")) { try delete(context, album) }
            try save(context)
            let left = ManagedObjectContext(store: store)
            #expect(try fetch(left, FetchRequest(entityName: "Media")).isEmpty)
            #expect(try fetch(left, FetchRequest(entityName: "Album")).isEmpty)
        },
        SuiteCase("siblings that each declare width share it: each saves, fetches and filters its own") {
            make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            let context = ManagedObjectContext(store: store)
            // Each sibling reads its own value back.
            let photos: [Photo] = try await Photo.query(
                context, predicate: nil, sortDescriptors: [.init(key: "code")], via: api)
            #expect(photos.map(\.width) == [640, 6_000])
            let videos: [Video] = try await Video.query(context, predicate: nil, via: api)
            #expect(videos == [video])
            // A predicate on the shared key through each sibling matches only that sibling's objects.
            let widePhotos: [Photo] = try await Photo.query(
                context, predicate: .key("width") > 1_000, sortDescriptors: [.init(key: "code")], via: api)
            #expect(widePhotos.map(\.code) == ["r1"])
            let wideVideos: [Video] = try await Video.query(context, predicate: .key("width") > 1_000, via: api)
            #expect(wideVideos == [video])
            let narrowVideos: [Video] = try await Video.query(context, predicate: .key("width") < 1_000, via: api)
            #expect(narrowVideos.isEmpty)
            let between = try fetch(context, FetchRequest(entityName: "Photo", predicate: .key("width") > 500))
            #expect(names(between) == ["Photo", "RawPhoto"])
            let typed = try await Video.query(context, predicate: #Predicate<Video> { $0.width == 1_920 })
            #expect(typed == [video])
            #expect(try count(context, FetchRequest(entityName: "Video", predicate: .key("width") > 100)) == 1)
            // A fetch of the parent returns both siblings, each with its own width.
            let all = try fetch(context, FetchRequest(entityName: "Media", sortDescriptors: [.init(key: "code")]))
            #expect(names(all) == ["Photo", "RawPhoto", "Video"])
            #expect(all.map { try? $0.value(forKey: "width", as: Int64.self) } == [640, 6_000, 1_920])
            // The parent has no width: a predicate on it through the parent is refused.
            #expect {
                _ = try fetch(context, FetchRequest(entityName: "Media", predicate: .key("width") == 640))
            } throws: { hasCode($0, .unknownKey) }
            // Changing one sibling's value leaves the other's alone.
            var wider = video
            wider.width = 3_840
            try await wider.save(ManagedObjectContext(store: store), via: api)
            let fresh = ManagedObjectContext(store: store)
            let after: [AnyMedia] = try await AnyMedia.query(
                fresh, predicate: nil, sortDescriptors: [.init(key: "code")], via: api)
            #expect(after == [.photo(photo), .rawPhoto(raw), .video(wider)])
            // Each sibling's own optionality applies: a video without a width is refused.
            let missing = try fresh.insert(entityName: "Video")
            try missing.setValue("v2", forKey: "code")
            try missing.setValue("Aria", forKey: "title")
            try missing.setValue(3.0, forKey: "seconds")
            #expect { try save(fresh) } throws: { hasCode($0, .missingValue) }
        },
        SuiteCase("a unique attribute is unique across the hierarchy") { make, api in
            let store = try make()
            try await saveOneOfEach(store, api)
            // The same identifier again on the same entity updates its row.
            var renamed = photo
            renamed.title = "Dunes"
            try await renamed.save(ManagedObjectContext(store: store), via: api)
            let photos: [Photo] = try await Photo.query(
                ManagedObjectContext(store: store), predicate: .key("code") == "p1", via: api)
            #expect(photos == [renamed])
            // A sibling entity's object cannot take it.
            let context = ManagedObjectContext(store: store)
            await #expect {
                try await Video(code: "p1", title: "Clash", width: 1, seconds: 1).save(context, via: api)
            } throws: { hasCode($0, .constraintViolation) }
            let videos: [Video] = try await Video.query(ManagedObjectContext(store: store), predicate: nil, via: api)
            #expect(videos == [video])
        },
    ]
}
