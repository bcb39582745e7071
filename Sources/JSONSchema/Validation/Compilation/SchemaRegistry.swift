/// All documents a validator knows, indexed by the URIs of their schema resources and by
/// anchors, used to resolve `$ref`, `$dynamicRef` and `$schema` at compile time.
final class SchemaRegistry {
    private(set) var documents: [JSONValue] = []
    private(set) var resources: [SchemaResource] = []
    private var resourcesByURI: [String: SchemaResource] = [:]
    /// Per document: escaped pointer of each resource root to that resource.
    private var resourceRoots: [[String: SchemaResource]] = []

    /// Keywords whose value is a subschema.
    private static let schemaKeywords: Set<String> = [
        "items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
        "unevaluatedItems", "unevaluatedProperties", "contentSchema",
    ]
    /// Keywords whose value is an object of subschemas.
    private static let schemaMapKeywords: Set<String> = ["$defs", "properties", "patternProperties", "dependentSchemas"]
    /// Keywords whose value is an array of subschemas.
    private static let schemaArrayKeywords: Set<String> = ["prefixItems", "allOf", "anyOf", "oneOf"]

    /// Adds a document retrieved from `uri` and indexes its resources and anchors. Returns the
    /// document's root resource. Resources whose URI is already known keep the first definition.
    @discardableResult
    func addDocument(_ root: JSONValue, uri: String, isSynthetic: Bool = false) -> SchemaResource {
        let document = documents.count
        documents.append(root)
        resourceRoots.append([:])
        let retrievalURI = URIReference.withoutFragment(uri)
        var rootURI = retrievalURI
        var synthetic = isSynthetic
        if case .string(let id)? = root["$id"] {
            rootURI = URIReference.withoutFragment(URIReference.resolve(id, against: retrievalURI))
            synthetic = false
        }
        let resource = SchemaResource(uri: rootURI, document: document, rootPointer: [], parent: nil, isSynthetic: synthetic)
        register(resource)
        if rootURI != retrievalURI, resourcesByURI[retrievalURI] == nil {
            resourcesByURI[retrievalURI] = resource
        }
        var pointer: [String] = []
        index(root, document: document, pointer: &pointer, resource: resource)
        return resource
    }

    private func register(_ resource: SchemaResource) {
        resources.append(resource)
        resourceRoots[resource.document][JSONPointer(tokens: resource.rootPointer).description] = resource
        if resourcesByURI[resource.uri] == nil {
            resourcesByURI[resource.uri] = resource
        }
    }

    private func index(_ value: JSONValue, document: Int, pointer: inout [String], resource: SchemaResource) {
        guard case .object(let object) = value else { return }
        var current = resource
        if case .string(let id)? = object["$id"], pointer != resource.rootPointer {
            let uri = URIReference.withoutFragment(URIReference.resolve(id, against: resource.uri))
            current = SchemaResource(uri: uri, document: document, rootPointer: pointer, parent: resource, isSynthetic: false)
            register(current)
        }
        if case .string(let schema)? = object["$schema"], pointer == current.rootPointer {
            current.metaschemaURI = URIReference.withoutFragment(URIReference.resolve(schema, against: current.uri))
        }
        if case .string(let anchor)? = object["$anchor"] {
            current.anchors[anchor] = pointer
        }
        if case .string(let anchor)? = object["$dynamicAnchor"] {
            if current.anchors[anchor] == nil { current.anchors[anchor] = pointer }
            current.dynamicAnchorPointers[anchor] = pointer
        }
        for (key, child) in object {
            if SchemaRegistry.schemaKeywords.contains(key) {
                pointer.append(key)
                index(child, document: document, pointer: &pointer, resource: current)
                pointer.removeLast()
            } else if SchemaRegistry.schemaMapKeywords.contains(key), case .object(let members) = child {
                pointer.append(key)
                for (name, subschema) in members {
                    pointer.append(name)
                    index(subschema, document: document, pointer: &pointer, resource: current)
                    pointer.removeLast()
                }
                pointer.removeLast()
            } else if SchemaRegistry.schemaArrayKeywords.contains(key), case .array(let elements) = child {
                pointer.append(key)
                for (i, subschema) in elements.enumerated() {
                    pointer.append(String(i))
                    index(subschema, document: document, pointer: &pointer, resource: current)
                    pointer.removeLast()
                }
                pointer.removeLast()
            }
        }
    }

    /// The resource with this absolute URI (no fragment), loading a built-in meta-schema on
    /// first use.
    func resource(for uri: String) -> SchemaResource? {
        if let known = resourcesByURI[uri] { return known }
        if let builtin = Metaschemas.documents[uri] {
            return addDocument(builtin, uri: uri)
        }
        return nil
    }

    /// The value at `pointer` in `document`.
    func value(document: Int, pointer: [String]) -> JSONValue? {
        JSONPointer(tokens: pointer).resolve(in: documents[document])
    }

    /// The innermost resource whose root is a prefix of `pointer`.
    func resourceContaining(document: Int, pointer: [String]) -> SchemaResource {
        let roots = resourceRoots[document]
        var prefixes: [String] = [""]
        var text = ""
        for token in pointer {
            text += "/" + JSONPointer.escape(token)
            prefixes.append(text)
        }
        for prefix in prefixes.reversed() {
            if let resource = roots[prefix] { return resource }
        }
        // Every document has a root resource registered at "".
        return roots[""]!
    }

    /// Resolves a reference (as written in `$ref`/`$dynamicRef`) against `base` to a document
    /// location. Throws with a message when the URI or the fragment cannot be found.
    func resolve(_ reference: String, against base: String) throws(ResolutionFailure) -> (document: Int, pointer: [String], fragment: String) {
        let absolute = URIReference.resolve(reference, against: base)
        let uri = URIReference.withoutFragment(absolute)
        let fragment = absolute.firstIndex(of: "#").map { String(absolute[absolute.index(after: $0)...]) } ?? ""
        guard let resource = resource(for: uri) else {
            throw ResolutionFailure(message: "cannot resolve \"\(reference)\": no schema with URI \"\(uri)\" is known (pass it in `resources`; the network is never used)")
        }
        if fragment.isEmpty {
            return (resource.document, resource.rootPointer, fragment)
        }
        let decoded = URIReference.percentDecoded(fragment)
        if decoded.unicodeScalars.first == "/" {
            guard let pointer = JSONPointer(decoded) else {
                throw ResolutionFailure(message: "cannot resolve \"\(reference)\": \"\(decoded)\" is not a valid JSON pointer")
            }
            let full = resource.rootPointer + pointer.tokens
            guard value(document: resource.document, pointer: full) != nil else {
                throw ResolutionFailure(message: "cannot resolve \"\(reference)\": nothing at \(decoded) in \"\(uri)\"")
            }
            return (resource.document, full, "")
        }
        guard let target = resource.anchors[decoded] else {
            throw ResolutionFailure(message: "cannot resolve \"\(reference)\": no anchor \"\(decoded)\" in \"\(uri)\"")
        }
        return (resource.document, target, decoded)
    }

    /// Why a reference could not be resolved.
    struct ResolutionFailure: Error {
        let message: String
    }
}
