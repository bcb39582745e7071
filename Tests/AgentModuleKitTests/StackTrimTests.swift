import AgentTestSupport
import CAgentModuleKit
import Foundation
import Synchronization
import Testing

/// `agent_module_kit_trim_stack` gives back the stack pages a thread went through below where
/// it now is, and nothing the thread still uses.
@Suite(.ownThreads) struct StackTrimTests {
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

    /// The C program of the main-thread test: trim_stack.c built in, its reads of /proc/self/maps
    /// counted. Its main thread notes its stack, then children forked from it (and one forked
    /// from another thread) go deep and trim, or change their stack's bottom; each prints what
    /// it saw.
    static let mainThreadProgram = #"""
    #define _GNU_SOURCE
    #include <pthread.h>
    #include <stdint.h>
    #include <stdio.h>
    #include <string.h>
    #include <sys/mman.h>
    #include <sys/wait.h>
    #include <unistd.h>
    static int maps_reads;
    static FILE *counted_fopen(const char *path, const char *mode) {
        if (strstr(path, "/maps")) maps_reads++;
        return fopen(path, mode);
    }
    #define fopen counted_fopen
    #include TRIM_SOURCE
    #undef fopen

    static __attribute__((noinline)) uintptr_t go_deep(int frames) {
        volatile char buffer[1024];
        for (int i = 0; i < 1024; i++) buffer[i] = (char)(i + frames);
        uintptr_t here = (uintptr_t)buffer;
        if (frames == 0) return here;
        uintptr_t below = go_deep(frames - 1);
        return below < here ? below : here;
    }
    static int resident(uintptr_t low, uintptr_t high) {
        low &= ~(uintptr_t)4095;
        high &= ~(uintptr_t)4095;
        if (high <= low) return -1;
        static unsigned char vector[4096];
        size_t count = (high - low) / 4096;
        if (count > sizeof(vector) || mincore((void *)low, high - low, vector) != 0) return -1;
        int pages = 0;
        for (size_t i = 0; i < count; i++) pages += vector[i] & 1;
        return pages;
    }
    static void deep_then_trim(const char *who, int frames) {
        volatile char mark = 0;
        uintptr_t top = (uintptr_t)&mark;
        uintptr_t lowest = go_deep(frames);
        uintptr_t high = top - 64 * 1024;
        int before = resident(lowest, high);
        int reads = maps_reads;
        long trimmed = agent_module_kit_trim_stack();
        int after = resident(lowest, high);
        printf("%s %d %d %ld %d\n", who, before, after, trimmed, maps_reads - reads);
        fflush(stdout);
    }
    static void in_child(const char *who, int frames) {
        pid_t child = fork();
        if (child == 0) {
            deep_then_trim(who, frames);
            _exit(0);
        }
        int status;
        waitpid(child, &status, 0);
    }
    /* A child whose stack's lowest 16 kB are replaced by another mapping, as a module's
       constructor could do, then forgotten, as a module's load does: the trim spares it. */
    static void remapped_child(void) {
        pid_t child = fork();
        if (child == 0) {
            uintptr_t low = main_stack_low;
            unsigned char *other = munmap((void *)low, 16384) == 0
                ? mmap((void *)low, 16384, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) : MAP_FAILED;
            if (other == MAP_FAILED) _exit(1);
            memset(other, 0xA5, 16384);
            agent_module_kit_forget_main_stack();
            int reads = maps_reads;
            long trimmed = agent_module_kit_trim_stack();
            int intact = 1;
            for (int i = 0; i < 16384; i++) intact &= other[i] == 0xA5;
            printf("remapped %d 0 %ld %d\n", intact, trimmed, maps_reads - reads);
            fflush(stdout);
            _exit(0);
        }
        int status;
        waitpid(child, &status, 0);
    }
    static void *from_thread(void *unused) {
        (void)unused;
        in_child("thread", 256);
        return NULL;
    }
    int main(void) {
        go_deep(512);
        agent_module_kit_note_main_stack();
        printf("noted 0 0 0 %d\n", maps_reads);
        fflush(stdout);
        in_child("shallower", 256);
        in_child("deeper", 1024);
        remapped_child();
        pthread_attr_t attributes;
        pthread_attr_init(&attributes);
        pthread_attr_setstacksize(&attributes, 4 << 20);
        pthread_t thread;
        pthread_create(&thread, &attributes, from_thread, NULL);
        pthread_join(thread, NULL);
        return 0;
    }
    """#

    /// Runs `executable` with `arguments`; its standard output, or nil when it failed.
    static func run(_ executable: String, _ arguments: [String]) throws -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return process.terminationStatus == 0 ? text : nil
    }

    @Test func theMainThreadsStackStartIsReadOnceForEveryProcessForkedFromIt() throws {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../SDK/Sources/CAgentModuleKit").standardized.path
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("stack-trim-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try Self.mainThreadProgram.write(toFile: "\(folder)/main.c", atomically: true, encoding: .utf8)
        let built = try Self.run("/usr/bin/env", ["cc", "-O1", "-I", "\(source)/include", "-DTRIM_SOURCE=\"\(source)/trim_stack.c\"",
                                                   "-o", "\(folder)/main", "\(folder)/main.c", "-lpthread"])
        try #require(built != nil, "the test program builds")
        let printed = try #require(try Self.run("\(folder)/main", []), "the test program runs")
        // who → (resident before, resident after, bytes trimmed, reads of /proc/self/maps)
        var seen: [String: [Int]] = [:]
        for line in printed.split(separator: "\n") {
            let fields = line.split(separator: " ")
            seen[String(fields[0])] = fields.dropFirst().compactMap { Int($0) }
        }
        #expect(seen["noted"]?.last == 1, "the note reads the maps once (\(printed))")
        let shallower = try #require(seen["shallower"], "the first child reports (\(printed))")
        #expect(shallower[3] == 0, "a child forked from the main thread, no deeper than it was, reads no maps")
        #expect(shallower[0] > 40 && shallower[1] == 0 && shallower[2] >= 180 * 1024, "and gives back its deep range: \(shallower)")
        let deeper = try #require(seen["deeper"], "the second child reports (\(printed))")
        #expect(deeper[3] == 1, "a child whose stack grew below the noted start reads the maps again")
        #expect(deeper[0] > 40 && deeper[1] == 0, "and gives back its whole deep range: \(deeper)")
        let remapped = try #require(seen["remapped"], "the child with a remapped stack bottom reports (\(printed))")
        #expect(remapped[0] == 1 && remapped[3] == 1, "after a forget the maps are read again, and the mapping below the stack is spared: \(remapped)")
        let thread = try #require(seen["thread"], "the child forked from a thread reports (\(printed))")
        #expect(thread[3] == 1, "a child forked from another thread (its main thread on that thread's stack) reads the maps")
        #expect(thread[0] > 40 && thread[1] == 0, "and gives back its deep range: \(thread)")
    }
}
