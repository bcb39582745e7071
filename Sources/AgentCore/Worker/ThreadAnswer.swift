import Foundation

/// Host-owned answers handed to a module, one per calling thread: an answer stays valid until
/// the same thread asks again (or ends), whatever other threads ask meanwhile — a task
/// executor's handlers call the host from several threads at once.
final class ThreadAnswer: Sendable {
    /// The thread's current answer (a `malloc`ed block), freed by the key's destructor when the
    /// thread ends.
    private let key: pthread_key_t

    init() {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        self.key = key
    }

    /// Stores `bytes` as the calling thread's answer (freeing its previous one) and returns
    /// where they are (never null, even for no bytes).
    func replace(with bytes: [UInt8]) -> UnsafeMutableRawPointer {
        free(pthread_getspecific(key))
        let storage = malloc(max(1, bytes.count))!
        bytes.withUnsafeBytes { storage.copyMemory(from: $0.baseAddress ?? UnsafeRawPointer(storage), byteCount: bytes.count) }
        pthread_setspecific(key, storage)
        return storage
    }
}
