/// Turns schema documents into `SchemaNode`s.
///
/// Nodes are created on demand for each schema location (document + pointer) and memoized, so
/// a location referenced from many places compiles once and recursive references become
/// cycles between nodes. Creation and filling are separated by a work list, which keeps deep
/// `$ref` chains from recursing on the call stack.
final class SchemaCompiler {
    private struct NodeKey: Hashable {
        let document: Int
        let pointer: [String]
    }

    let registry: SchemaRegistry
    let formatAssertion: Bool
    private var nodes: [NodeKey: SchemaNode] = [:]
    private(set) var allNodes: [SchemaNode] = []
    private var pending: [(SchemaNode, JSONValue)] = []

    init(registry: SchemaRegistry, formatAssertion: Bool) {
        self.registry = registry
        self.formatAssertion = formatAssertion
    }

    /// The node for the schema at `pointer` in `document`, created (and queued for compiling)
    /// on first request.
    func node(document: Int, pointer: [String]) throws(JSONSchemaCompileError) -> SchemaNode {
        let key = NodeKey(document: document, pointer: pointer)
        if let existing = nodes[key] { return existing }
        guard let value = registry.value(document: document, pointer: pointer) else {
            throw compileError(document, pointer, "no schema at this location")
        }
        let resource = registry.resourceContaining(document: document, pointer: pointer)
        let node = SchemaNode(document: document, pointer: pointer, resource: resource)
        nodes[key] = node
        allNodes.append(node)
        pending.append((node, value))
        try prepare(resource)
        return node
    }

    /// Compiles queued nodes until none are left.
    func compilePending() throws(JSONSchemaCompileError) {
        while let (node, value) = pending.popLast() {
            try compile(node, value)
        }
    }

    /// Determines the resource's vocabularies and compiles its `$dynamicAnchor` targets, which
    /// a `$dynamicRef` may jump to whenever the resource is in the dynamic scope.
    private func prepare(_ resource: SchemaResource) throws(JSONSchemaCompileError) {
        guard !resource.isPrepared else { return }
        resource.isPrepared = true
        resource.vocabularies = try vocabularies(of: resource)
        for (name, pointer) in resource.dynamicAnchorPointers {
            resource.dynamicAnchors[name] = try node(document: resource.document, pointer: pointer)
        }
    }

    private func vocabularies(of resource: SchemaResource) throws(JSONSchemaCompileError) -> Vocabularies {
        var owner: SchemaResource? = resource
        while let current = owner, current.metaschemaURI == nil { owner = current.parent }
        guard let metaschemaURI = owner?.metaschemaURI, metaschemaURI != Metaschemas.draft202012 else {
            return .standard
        }
        if Vocabularies.isLegacyDialect(metaschemaURI) {
            return Vocabularies.standard.union(.legacyItems)
        }
        guard let metaschema = registry.resource(for: metaschemaURI),
            case .object(let vocabulary)? = registry.value(document: metaschema.document, pointer: metaschema.rootPointer)?["$vocabulary"]
        else {
            return .standard
        }
        let (declared, unknownRequired) = Vocabularies.declared(by: vocabulary)
        if let unknownRequired {
            throw compileError(resource.document, resource.rootPointer, "the meta-schema \"\(metaschemaURI)\" requires the unsupported vocabulary \"\(unknownRequired)\"")
        }
        return declared
    }

    /// A compile error located at a schema location: a plain pointer inside the main schema,
    /// `<document URI>#<pointer>` inside other documents.
    func compileError(_ document: Int, _ pointer: [String], _ message: String) -> JSONSchemaCompileError {
        let text = JSONPointer(tokens: pointer).description
        if document == 0 { return JSONSchemaCompileError(schemaLocation: text, message: message) }
        let root = registry.resourceContaining(document: document, pointer: [])
        return JSONSchemaCompileError(schemaLocation: "\(root.uri)#\(text)", message: message)
    }

    /// The node for a subschema below `node` (e.g. `["properties", "name"]`).
    func child(_ node: SchemaNode, _ tokens: String...) throws(JSONSchemaCompileError) -> SchemaNode {
        try self.node(document: node.document, pointer: node.pointer + tokens)
    }

    /// Resolves a `$ref`/`$dynamicRef` value against the node's base URI.
    func resolveReference(_ reference: String, from node: SchemaNode, keyword: String) throws(JSONSchemaCompileError) -> (SchemaNode, String) {
        let resolved: (document: Int, pointer: [String], fragment: String)
        do {
            resolved = try registry.resolve(reference, against: node.resource.uri)
        } catch {
            throw compileError(node.document, node.pointer + [keyword], error.message)
        }
        return (try self.node(document: resolved.document, pointer: resolved.pointer), resolved.fragment)
    }
}
