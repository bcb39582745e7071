/// Comparisons of secrets (tokens, CSRF tokens) whose time does not depend on where the
/// strings first differ, so that a client cannot find a secret one byte at a time.
enum ConstantTime {
    /// Whether `a` and `b` are equal, in a time that depends only on their lengths.
    static func equals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference: UInt8 = x.count == y.count ? 0 : 1
        for index in 0..<max(x.count, y.count) {
            difference |= (index < x.count ? x[index] : 0) ^ (index < y.count ? y[index] : 0)
        }
        return difference == 0
    }
}
