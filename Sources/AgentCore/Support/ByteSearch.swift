import Glibc

extension Array where Element == UInt8 {
    /// The index of the first `byte` at or after `start`, or nil. With memchr: a MiB searched
    /// element by element took milliseconds (tens in a debug build).
    package func firstIndex(of byte: UInt8, from start: Int) -> Int? {
        guard start < count else { return nil }
        return withUnsafeBytes { raw in
            memchr(raw.baseAddress! + start, Int32(byte), raw.count - start).map { raw.baseAddress!.distance(to: UnsafeRawPointer($0)) }
        }
    }
}
