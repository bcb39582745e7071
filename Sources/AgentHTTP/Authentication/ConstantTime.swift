/// Comparisons of secrets (tokens, CSRF tokens) whose time does not depend on where the
/// strings first differ, so that a client cannot find a secret one byte at a time.
enum ConstantTime {
    /// Whether `a` and `b` are equal, in a time that depends only on their lengths.
    static func equals(_ a: String, _ b: String) -> Bool {
        var difference: UInt8 = a.utf8.count == b.utf8.count ? 0 : 1
        var x = a.utf8.makeIterator(), y = b.utf8.makeIterator()
        while true {
            let left = x.next(), right = y.next()
            if left == nil, right == nil { break }
            difference |= (left ?? 0) ^ (right ?? 0)
        }
        return difference == 0
    }
}
