/// The string keywords of one schema (`format` is kept on the node: it is not string-only
/// in principle, though every known format is).
final class StringConstraints {
    var minLength: Int?
    var maxLength: Int?
    var pattern: PatternRegex?
}
