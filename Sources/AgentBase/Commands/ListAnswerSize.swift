/// How large a list's answer grows: a list of runs or of events stops once its entries come to
/// ``bytes`` of JSON and says so (`"truncated": true`). A list of 10,000 entries could be tens of
/// MB (hundreds for events at their payload limit), read and then written whole on an HTTP
/// front's one thread while every other request waited.
public enum ListAnswerSize {
    /// The most bytes of JSON a list's entries come to.
    public static let bytes = 4 << 20
}
