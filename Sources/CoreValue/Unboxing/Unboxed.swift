/// The seed's result type for an unboxing that may fail; kept for source compatibility. The operators
/// throw instead of returning it.
public enum Unboxed<T> {
    /// The unboxed value.
    case success(T)
    /// What did not match.
    case typeMismatch(String)

    /// The value, or `nil` for a mismatch.
    public var value: T? {
        switch self {
        case .success(let value): return value
        case .typeMismatch: return nil
        }
    }
}
