import Foundation

/// Operations whose safety the compiler cannot check, each for a caller that proved what it needs: kept here,
/// beside the library's other unsafe code (``StructFields``, ``ThreadSlot``, ``LockedTable``), so that the rest
/// of the module is ordinary Swift (`scripts/check-unsafe.sh` fails on unsafe code elsewhere).
package enum Unchecked {
    /// Hashes `text` by its UTF-8 bytes, in one call: what `==` on text compares when it compares bytes
    /// (Unicode-equivalent strings that differ in bytes are different values to the server).
    static func hashUTF8(_ text: String, into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }

    /// Whether two strings have the same UTF-8 bytes: one `memcmp` over their contiguous storage (a native
    /// string's, or a small string's copy on the stack), rather than iterating two `utf8` views a byte at a
    /// time: names and identifiers are compared on every save.
    static func sameUTF8(_ left: String, _ right: String) -> Bool {
        guard left.utf8.count == right.utf8.count else { return false }
        var left = left
        var right = right
        return left.withUTF8 { a in
            right.withUTF8 { b in
                guard let x = a.baseAddress, let y = b.baseAddress else { return true }  // both empty
                return memcmp(x, y, a.count) == 0
            }
        }
    }

    /// Whether `text`'s UTF-8 bytes contain `byte`: one tight loop over the contiguous bytes (a native string's,
    /// without copying), no index per byte.
    package static func utf8(of text: String, contains byte: UInt8) -> Bool {
        var text = text
        return text.withUTF8 { $0.contains(byte) }
    }

    /// `object` as the `T` the caller knows it to be, without a checked cast (which goes through `T`'s generic
    /// metadata every time). Only for an object the caller itself stored as a `T`.
    @inline(__always)
    static func downcast<T: AnyObject>(_ object: AnyObject, to _: T.Type) -> T {
        unsafeDowncast(object, to: T.self)
    }
}
