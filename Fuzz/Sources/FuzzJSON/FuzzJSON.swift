import JSONSchema

/// The JSON parser on arbitrary bytes. Whatever it accepts, the writer must write as text the
/// parser reads back to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    guard let value = try? JSONValue.parse(bytes) else { return 0 }
    let text = value.serialized()
    guard let again = try? JSONValue.parse(text) else {
        fatalError("the writer's output does not parse: \(text)")
    }
    guard again == value else { fatalError("a round trip changed the value: \(text)") }
    return 0
}
