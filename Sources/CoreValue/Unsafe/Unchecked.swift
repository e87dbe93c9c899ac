/// Operations whose safety the compiler cannot check, each for a caller that proved what it needs: kept here,
/// beside the library's other unsafe code (``StructFields``, ``ThreadSlot``, ``LockedTable``), so that the rest
/// of the module is ordinary Swift (`scripts/check-unsafe.sh` fails on unsafe code elsewhere).
enum Unchecked {
    /// Hashes `text` by its UTF-8 bytes, in one call: what `==` on text compares when it compares bytes
    /// (Unicode-equivalent strings that differ in bytes are different values to the server).
    static func hashUTF8(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// `object` as the `T` the caller knows it to be, without a checked cast (which goes through `T`'s generic
    /// metadata every time). Only for an object the caller itself stored as a `T`.
    @inline(__always)
    static func downcast<T: AnyObject>(_ object: AnyObject, to _: T.Type) -> T {
        unsafeDowncast(object, to: T.self)
    }
}
