#if canImport(Glibc)
import Glibc
#endif

/// A growable buffer of outgoing frame bytes, shared by reference.
///
/// The hot paths (a worker's emit, the supervisor's routing) append a frame per event: here a
/// frame is written in place after one capacity check, with no copy-on-write uniqueness check
/// and no exclusive access to a property of the owner for the length of the write.
///
/// Its state lives behind a pointer that never changes: the class's stored property is a
/// `let`, so an append costs no dynamic exclusivity check (those were a tenth of an emit).
public final class FrameBuffer {
    @usableFromInline
    struct State {
        @usableFromInline var storage: UnsafeMutableRawPointer?
        @usableFromInline var capacity: Int
        @usableFromInline var count: Int
    }

    @usableFromInline let state: UnsafeMutablePointer<State>

    public init(capacity: Int = 0) {
        state = .allocate(capacity: 1)
        state.initialize(to: State(storage: capacity > 0 ? Self.resize(nil, to: capacity) : nil, capacity: capacity, count: 0))
    }

    deinit {
        free(state.pointee.storage)
        state.deallocate()
    }

    /// malloc's realloc: a large buffer grows by remapping its pages (mremap), neither copied
    /// nor touched again (a queue growing to 16 MB copied 15 MB and faulted 32 MB in).
    private static func resize(_ storage: UnsafeMutableRawPointer?, to capacity: Int) -> UnsafeMutableRawPointer {
        guard let grown = realloc(storage, capacity) else { fatalError("out of memory: a frame buffer of \(capacity) bytes") }
        return grown
    }

    /// The bytes held.
    @inlinable public var count: Int { state.pointee.count }
    /// The bytes it can hold before it grows.
    public var capacity: Int { state.pointee.capacity }
    @inlinable public var isEmpty: Bool { state.pointee.count == 0 }

    /// Appends `length` bytes written by `fill` (little-endian fields through `storeBytes`)
    /// at the address it is given.
    @inlinable
    public func append(_ length: Int, _ fill: (UnsafeMutableRawPointer) -> Void) {
        guard length > 0 else { return }
        if state.pointee.capacity - state.pointee.count < length { reserve(length) }
        fill(state.pointee.storage.unsafelyUnwrapped + state.pointee.count)
        state.pointee.count += length
    }

    /// Makes room for `extra` more bytes (at least doubling, so appends are amortized O(1)).
    @usableFromInline
    func reserve(_ extra: Int) {
        let needed = state.pointee.count + extra
        guard needed > state.pointee.capacity else { return }
        let grown = Swift.max(needed, state.pointee.capacity * 2, 256)
        state.pointee.storage = Self.resize(state.pointee.storage, to: grown)
        state.pointee.capacity = grown
    }

    public func append(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        append(bytes.count) { $0.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
    }

    public func append(_ byte: UInt8) {
        append(1) { $0.storeBytes(of: byte, as: UInt8.self) }
    }

    public func append(contentsOf bytes: some Collection<UInt8>) {
        if bytes.withContiguousStorageIfAvailable({ append(UnsafeRawBufferPointer($0)) }) != nil { return }
        let length = bytes.count
        append(length) { start in
            var cursor = start
            for byte in bytes {
                cursor.storeBytes(of: byte, as: UInt8.self)
                cursor += 1
            }
        }
    }

    /// Calls `body` with the bytes held (valid only during the call).
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: state.pointee.storage, count: state.pointee.count))
    }

    /// Whether it holds exactly `bytes`.
    public func holds(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count == count else { return false }
        return count == 0 || memcmp(state.pointee.storage.unsafelyUnwrapped, bytes.baseAddress!, count) == 0
    }

    /// A copy of the bytes held.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Empties the buffer; its memory is kept when `keepingCapacity` (for the next burst).
    public func removeAll(keepingCapacity: Bool) {
        state.pointee.count = 0
        if !keepingCapacity, let storage = state.pointee.storage {
            free(storage)
            state.pointee.storage = nil
            state.pointee.capacity = 0
        }
    }

    /// Removes the first `length` bytes.
    public func removeFirst(_ length: Int) {
        removeSubrange(0..<length)
    }

    /// Removes `range`, moving what follows it down.
    public func removeSubrange(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= count, "range out of bounds")
        guard !range.isEmpty, let storage = state.pointee.storage else { return }
        let tail = count - range.upperBound
        if tail > 0 { (storage + range.lowerBound).copyMemory(from: storage + range.upperBound, byteCount: tail) }
        state.pointee.count -= range.count
    }

    /// Puts `bytes` before everything held.
    public func prepend(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        reserve(bytes.count)
        let storage = state.pointee.storage.unsafelyUnwrapped
        if count > 0 { (storage + bytes.count).copyMemory(from: storage, byteCount: count) }
        bytes.withUnsafeBytes { storage.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        state.pointee.count += bytes.count
    }

    /// Exchanges the contents of two buffers (a writer thread takes a whole batch this way).
    public func swapContents(with other: FrameBuffer) {
        swap(&state.pointee, &other.state.pointee)
    }
}
