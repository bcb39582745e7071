/// The array keywords of one schema, including the item applicators.
final class ArrayConstraints {
    var minItems: Int?
    var maxItems: Int?
    var uniqueItems = false
    var prefixItems: [SchemaNode] = []
    var items: SchemaNode?
    /// Keyword names for messages: `items`/`additionalItems` in pre-2020-12 resources.
    var prefixItemsKeyword = "prefixItems"
    var itemsKeyword = "items"
    var contains: SchemaNode?
    var minContains = 1
    var maxContains: Int?
    var unevaluatedItems: SchemaNode?
}
