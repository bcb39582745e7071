import CAgentModuleKit
import Foundation
import Synchronization
import Testing

/// `agent_module_kit_trim_stack` gives back the stack pages a thread went through below where
/// it now is, and nothing the thread still uses.
@Suite struct StackTrimTests {
    /// Pages resident in memory (mincore) from `low` up to `high`; -1 when the range is empty
    /// or mincore refuses it.
    static func residentPages(from low: UInt, to high: UInt) -> Int {
        guard high > low else { return -1 }
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let start = low & ~(page - 1)
        let count = Int((high - start) / page)
        var vector = [UInt8](repeating: 0, count: count)
        guard mincore(UnsafeMutableRawPointer(bitPattern: start), Int(high - start), &vector) == 0 else { return -1 }
        return vector.reduce(0) { $0 + Int($1 & 1) }
    }

    /// Goes `depth` frames of over 1 kB down, writing every byte of a 1 kB buffer in each
    /// (the size the standard library always puts on the stack); returns the lowest address
    /// written.
    @inline(never)
    static func goDeep(_ depth: Int) -> UInt {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer in
            for i in 0..<buffer.count { buffer[i] = UInt8(truncatingIfNeeded: i &+ depth) }
            let here = UInt(bitPattern: buffer.baseAddress!)
            return depth > 0 ? min(here, goDeep(depth - 1)) : here
        }
    }

    /// What the thread saw: resident pages of the deep range before and after the trim, its
    /// own frame's bytes intact after it, and whether it could go deep again.
    struct Seen: Sendable {
        var before = 0
        var after = 0
        var trimmedBytes = 0
        var frameIntact = false
        var deepAgain = false
    }

    @Test func pagesBelowTheCallersDepthAreGivenBackAndItsOwnFrameIsKept() throws {
        let seen = Mutex(Seen())
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            // A frame of the caller's that must survive: 1 kB of known bytes.
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { mine in
                for i in 0..<mine.count { mine[i] = UInt8(truncatingIfNeeded: i &* 7) }
                let top = UInt(bitPattern: mine.baseAddress!)
                // 256 frames: over 256 kB of stack below this frame.
                let lowest = Self.goDeep(256)
                let deepLow = lowest & ~4095
                // The part surely below the trim's margin (4 kB under its caller's depth).
                let deepHigh = (top - 64 * 1024) & ~4095
                var result = Seen()
                result.before = Self.residentPages(from: deepLow, to: deepHigh)
                result.trimmedBytes = agent_module_kit_trim_stack()
                result.after = Self.residentPages(from: deepLow, to: deepHigh)
                result.frameIntact = (0..<mine.count).allSatisfy { mine[$0] == UInt8(truncatingIfNeeded: $0 &* 7) }
                result.deepAgain = Self.goDeep(256) <= lowest &+ 8192
                seen.withLock { $0 = result }
            }
            done.signal()
        }
        thread.stackSize = 1 << 20
        thread.start()
        #expect(done.wait(timeout: .now() + 120) == .success, "the thread ends")
        let result = seen.withLock { $0 }
        #expect(result.before > 40, "the deep range was resident before the trim (\(result.before) pages)")
        #expect(result.trimmedBytes >= 200 * 1024, "the trim gave back the range below the caller (\(result.trimmedBytes) bytes)")
        #expect(result.after == 0, "no page of the deep range stays resident (\(result.after) pages)")
        #expect(result.frameIntact, "the caller's own frame is unchanged")
        #expect(result.deepAgain, "the thread goes as deep again afterwards")
    }
}
