/// A schema resource: a document root or a subschema with its own `$id`, which defines the
/// base URI for references inside it and the anchors it exports.
///
/// Mutable only while the validator is being compiled; afterwards it is read-only, which is
/// why sharing it across threads is sound.
// @unchecked: filled in while compiling (with the nodes it anchors), immutable afterwards.
final class SchemaResource: @unchecked Sendable {
    /// Absolute URI without fragment.
    let uri: String
    /// Index of the containing document in the registry.
    let document: Int
    /// Pointer tokens from the document root to this resource's root.
    let rootPointer: [String]
    /// The lexically enclosing resource, whose `$schema` is inherited.
    let parent: SchemaResource?
    /// Whether `uri` was invented because the caller gave no base URI; such URIs are not
    /// reported in `absoluteKeywordLocation`.
    let isSynthetic: Bool

    /// `$anchor` and `$dynamicAnchor` names to document pointers (for static resolution).
    var anchors: [String: [String]] = [:]
    /// `$dynamicAnchor` names to document pointers (for dynamic resolution).
    var dynamicAnchorPointers: [String: [String]] = [:]
    /// The resolved `$schema` of this resource's root, if any.
    var metaschemaURI: String?

    /// Vocabularies in effect, computed when the first node of the resource is compiled.
    var vocabularies: Vocabularies = .standard
    var isPrepared = false
    /// Compiled `$dynamicAnchor` targets, consulted when a `$dynamicRef` searches the
    /// dynamic scope.
    var dynamicAnchors: [String: SchemaNode] = [:]

    init(uri: String, document: Int, rootPointer: [String], parent: SchemaResource?, isSynthetic: Bool) {
        self.uri = uri
        self.document = document
        self.rootPointer = rootPointer
        self.parent = parent
        self.isSynthetic = isSynthetic
    }
}
