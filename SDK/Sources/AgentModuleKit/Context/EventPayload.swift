/// The payload bytes of a delivered event.
///
/// The events of one batch share one buffer, so that receiving costs no allocation per event:
/// a payload is a view into it. It is a collection of bytes (`Data(payload)`,
/// `String(decoding: payload, as: UTF8.self)` and `Array(payload)` work as with an array,
/// indices start at 0) and lends its bytes without a copy through ``withUnsafeBytes(_:)``.
///
/// A payload kept keeps its whole batch in memory (at most 128 events); keep
/// `Array(payload)` when only a few events of many are kept for long.
public struct EventPayload: RandomAccessCollection, Hashable, Sendable, ExpressibleByArrayLiteral {
    public typealias Element = UInt8
    /// Positions are byte offsets from 0.
    public typealias Index = Int
    /// The offsets `0..<count`.
    public typealias Indices = Range<Int>

    /// nil exactly when `count` is 0 (every initializer keeps this).
    @usableFromInline let storage: PayloadStorage?
    @usableFromInline let offset: Int
    /// The number of bytes.
    public let count: Int

    init(storage: PayloadStorage, offset: Int, count: Int) {
        self.storage = count > 0 ? storage : nil
        self.offset = offset
        self.count = count
    }

    /// No bytes.
    public init() {
        storage = nil
        offset = 0
        count = 0
    }

    /// A payload holding a copy of `bytes`.
    public init(_ bytes: some Sequence<UInt8>) {
        let array = Array(bytes)
        let storage = PayloadStorage(capacity: array.count)
        array.withUnsafeBytes { _ = storage.append($0) }
        self.init(storage: storage, offset: 0, count: array.count)
    }

    /// A payload of the given bytes (for tests).
    public init(arrayLiteral bytes: UInt8...) {
        if bytes.isEmpty { self.init() } else { self.init(bytes) }
    }

    @inlinable public var startIndex: Int { 0 }
    @inlinable public var endIndex: Int { count }
    @inlinable public var indices: Range<Int> { 0..<count }

    @inlinable
    public subscript(position: Int) -> UInt8 {
        precondition(position >= 0 && position < count, "index out of range")
        return storage.unsafelyUnwrapped.base.load(fromByteOffset: offset + position, as: UInt8.self)
    }

    /// Calls `body` with the bytes (valid only during the call).
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        guard let storage else { return try body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return try withExtendedLifetime(storage) { try body(UnsafeRawBufferPointer(start: storage.base + offset, count: count)) }
    }

    @inlinable
    public func withContiguousStorageIfAvailable<R>(_ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R? {
        try withUnsafeBytes { try body($0.bindMemory(to: UInt8.self)) }
    }

    public static func == (lhs: EventPayload, rhs: EventPayload) -> Bool {
        lhs.count == rhs.count && lhs.withUnsafeBytes { l in rhs.withUnsafeBytes { r in l.elementsEqual(r) } }
    }

    public func hash(into hasher: inout Hasher) {
        withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// The payload bytes of one batch of events (written once while the batch is made, then only
/// read, from any thread).
@usableFromInline
final class PayloadStorage: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutableRawPointer
    private let capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(byteCount: Swift.max(capacity, 1), alignment: 8)
    }

    deinit { base.deallocate() }

    /// Copies `bytes` after what it holds; returns where they start.
    @discardableResult
    func append(_ bytes: UnsafeRawBufferPointer) -> Int {
        precondition(count + bytes.count <= capacity, "payload storage overflow")
        let start = count
        if bytes.count > 0 { (base + start).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        count += bytes.count
        return start
    }
}
