extension String {
    /// Code-point equality (unlike `==`, which uses canonical equivalence).
    @inline(__always)
    func isExactlyEqual(to other: String) -> Bool {
        let a = utf8
        let b = other.utf8
        guard a.count == b.count else { return false }
        // Native strings expose their UTF-8 storage, which compares far faster than the view.
        let fast = a.withContiguousStorageIfAvailable { x in
            b.withContiguousStorageIfAvailable { y in x.elementsEqual(y) }
        }
        if let fast, let result = fast { return result }
        return a.elementsEqual(b)
    }

    /// Hashes the UTF-8 bytes, consistent with `isExactlyEqual(to:)`.
    func hashExactly(into hasher: inout Hasher) {
        var copy = self
        copy.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
        hasher.combine(utf8.count)
    }
}
