import AgentCore

/// The frame decoder and the event frame parsers on arbitrary bytes, as a worker or the
/// supervisor could send them. The first two bytes choose where the input is split into reads
/// and after which frame the consumer holds; however the bytes arrive, the decoder must hand
/// out the same frames (or the same error) as when they arrive at once.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFrames(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    let step = Int(input[0]) + 1
    let holdAt = Int(input[1])
    let bytes = Array(input[2...])

    var whole = FrameDecoder()
    var expected: [(FrameKind, [UInt8])] = []
    var failed = false
    do { expected = try whole.feed(bytes) } catch { failed = true }

    var decoder = FrameDecoder()
    var frames: [(FrameKind, [UInt8])] = []
    var held = false
    var chunkFailed = false
    var offset = 0
    do {
        // Whatever a hold kept comes out at the next feed, even an empty one.
        repeat {
            let end = min(offset + step, bytes.count)
            try bytes[offset..<end].withUnsafeBytes { chunk in
                try decoder.feed(chunk) { kind, body in
                    // Hold once, at the chosen frame: it must come again at the next feed.
                    if !held, frames.count == holdAt {
                        held = true
                        throw FrameDecoder.Hold()
                    }
                    frames.append((kind, Array(body)))
                    parse(kind, body)
                }
            }
            offset = end
        } while offset < bytes.count || decoder.isHolding
    } catch {
        chunkFailed = true
    }
    if !failed && !chunkFailed {
        guard frames.count == expected.count, zip(frames, expected).allSatisfy({ $0.0 == $1.0 && $0.1 == $1.1 }) else {
            fatalError("reads of \(step) bytes gave \(frames.count) frames, one read \(expected.count)")
        }
    }
    if failed != chunkFailed, !failed {
        fatalError("reads of \(step) bytes failed where one read did not")
    }
    return 0
}

/// Every parser a frame body meets, whatever its kind claims.
func parse(_ kind: FrameKind, _ body: UnsafeRawBufferPointer) {
    if let emitted = try? EventFrame.parseEmitted(body) { _ = emitted.payload.count }
    _ = try? EventFrame.parseDelivered(body)
    _ = try? EventFrame.parseDelivery(body)
    if let run = try? EventFrame.parseRun(body) {
        var offset = 0
        while let entry = EventFrame.runEntry(run.entries, at: offset) {
            precondition(entry.next > offset && entry.next <= run.entries.count, "a run entry must move forward inside the run")
            offset = entry.next
        }
    }
    // As the supervisor counts a delivery frame it queued (its length checked).
    var framed: [UInt8] = []
    FrameCodec.append(kind, body: body, to: &framed)
    _ = framed.withUnsafeBytes { EventFrame.deliveryEvents($0, at: 0) }
}
