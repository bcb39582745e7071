@testable import AgentCore

/// The shared ring's readers on arbitrary frames: the worker's delivery receive (as a broken
/// supervisor could publish them) and the supervisor's copy of what a dead worker did not see
/// (as a broken worker could leave the ring, its `seen` mark anywhere). The input is
/// `seen (2 bytes, little-endian) | frames`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRing(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    guard input.count >= 2 else { return 0 }
    let seen = Int(input[0]) | Int(input[1]) << 8
    let frames = Array(input[2...].prefix(ring.capacity))

    // Start each input on an empty ring: give back whatever the last one left.
    if let left = ring.readable(), left.count > 0 { _ = ring.release(left.count) }
    frames.withUnsafeBytes { ring.write($0) }
    _ = ring.publish()

    let receiver = RingReceiver(ring: ring, roomSignal: -1)
    var events = 0
    var batches = 0
    while receiver.take() {
        while let event = receiver.next() {
            // Touch every byte the module would read.
            var sum = 0
            for i in 0..<event.type_len { sum &+= Int(event.type[i]) }
            for i in 0..<event.source_len { sum &+= Int(event.source[i]) }
            if let payload = event.payload { for i in 0..<event.payload_len { sum &+= Int(payload[i]) } }
            checksum &+= sum
            events += 1
            if events == seen % 7 { receiver.markHandedOut() }
        }
        batches += 1
        if batches > seen % 3 { break }
    }
    // As if the worker died here: the supervisor copies what it did not see, the mark set by
    // the input wherever it points.
    ring.markSeen(seen % (frames.count + 2))
    let unseen = ring.unseenFrames()
    checksum &+= unseen.count + unseen.frames.count
    receiver.releaseBatch()
    return 0
}

let ring: SharedRing = try! SharedRing.create(capacity: 64 << 10).ring
nonisolated(unsafe) var checksum = 0
