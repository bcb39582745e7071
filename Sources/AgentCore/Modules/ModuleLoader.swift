import AgentModuleABI
import CAgentModuleKit
import Foundation

/// A module library loaded into this process, with its checked ABI and decoded manifest.
// @unchecked: `entry` points to the module's static, read-only description (never unloaded).
public struct LoadedModule: @unchecked Sendable {
    /// The name the module was asked for (as enabled in settings).
    public let module: String
    public let file: String
    public let manifest: ModuleManifest
    /// The manifest as the module wrote it.
    public let manifestJSON: String
    /// The module's static description; valid for the life of the process (never unloaded).
    let entry: UnsafePointer<agent_module>

    var runProcess: agent_run_process_fn? { entry.pointee.run_process }

    /// Whether the module's struct reaches `field` (fields past its `struct_size` are absent).
    private func has<T>(_ field: KeyPath<agent_module, T>) -> Bool {
        guard let offset = MemoryLayout<agent_module>.offset(of: field) else { return false }
        return offset + MemoryLayout<T>.size <= Int(entry.pointee.struct_size)
    }

    /// The task entry points (ABI 2), nil when the module has none.
    var taskEntries: TaskEntryPoints? {
        guard has(\.task_run), let create = entry.pointee.task_create, let run = entry.pointee.task_run else { return nil }
        let cancel = has(\.task_cancel) ? entry.pointee.task_cancel : nil
        // Preparing runs ahead takes all three: a prepared run is taken back through the cancel.
        var prepared: TaskEntryPoints.Prepared?
        if cancel != nil, has(\.task_start), let prepare = entry.pointee.task_prepare, let start = entry.pointee.task_start {
            prepared = TaskEntryPoints.Prepared(prepare: prepare, start: start)
        }
        return TaskEntryPoints(create: create, run: run, cancel: cancel, prepared: prepared)
    }
}

/// Loads module libraries with `dlopen` and checks them before anything runs.
///
/// Only workers load modules: `dlopen` runs the library's constructors, and a module that
/// crashes must cost one worker, never the supervisor. Libraries are never unloaded: the
/// Swift runtime keeps pointers into a Swift library (`RTLD_NODELETE`).
public enum ModuleLoader {
    /// The smallest `struct_size` that holds every field of ABI version 1 a host needs.
    static let minimumStructSize = MemoryLayout<agent_module>.offset(of: \agent_module.run_process)! + MemoryLayout<agent_run_process_fn?>.size

    /// Checks the file, loads it, checks the ABI and decodes the manifest.
    /// - Parameter expectedName: when given, the manifest's name must equal it.
    /// - Parameter deferManifest: the caller only runs the module's types (a worker; the
    ///   supervisor read the whole manifest through a describe): a module that exports
    ///   `agent_module_defer_manifest` is asked to skip its schemas, and its manifest may be
    ///   partial (types and kinds).
    public static func load(path: String, module: String, expectedName: String? = nil, deferManifest: Bool = false) throws(ModuleLoadError) -> LoadedModule {
        try checkFile(path: path, module: module)

        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE) else {
            let reason = dlerror().map { String(cString: $0) } ?? "unknown error"
            throw ModuleLoadError(.loadFailed, module: module, file: path,
                                  "dlopen failed: \(reason). If a library it depends on is missing, install it or rebuild the module.")
        }
        // Its constructors may have changed the mappings below the main thread's stack.
        agent_module_kit_forget_main_stack()
        // Deferred only where the library says it can defer: a partial manifest from one that
        // exports no such symbol is refused like any manifest the host did not ask for.
        var deferred = false
        if deferManifest, let symbol = dlsym(handle, AGENT_MODULE_DEFER_MANIFEST_SYMBOL) {
            unsafeBitCast(symbol, to: (@convention(c) () -> Void).self)()
            deferred = true
        }
        guard let symbol = dlsym(handle, AGENT_MODULE_ENTRY_SYMBOL) else {
            throw ModuleLoadError(.missingEntry, module: module, file: path,
                                  "the library does not export the symbol \(AGENT_MODULE_ENTRY_SYMBOL). A Swift module declares `@_cdecl(\"agent_module_entry\") public func agentModuleEntry() -> OpaquePointer? { exportModule(...) }`; a C module defines `const agent_module *agent_module_entry(void)`.")
        }
        let entryFunction = unsafeBitCast(symbol, to: agent_module_entry_fn.self)
        guard let description = entryFunction() else {
            throw ModuleLoadError(.invalidManifest, module: module, file: path, "\(AGENT_MODULE_ENTRY_SYMBOL)() returned NULL; it must return the module's static description")
        }
        // Read only the two leading fields until the version is known to match.
        let raw = UnsafeRawPointer(description)
        let abiVersion = raw.load(as: UInt32.self)
        let structSize = raw.load(fromByteOffset: 4, as: UInt32.self)
        if abiVersion == 1 {
            throw ModuleLoadError(.abiMismatch, module: module, file: path,
                                  "the module was built against module ABI 1; this host speaks version \(AGENT_MODULE_ABI_VERSION) (ABI 2 added task handlers and is not read from an ABI 1 library). Rebuild it with this runtime's SDK: `swift build` against AgentModuleKit, or a C module against this agent_module.h.")
        }
        guard abiVersion == AGENT_MODULE_ABI_VERSION else {
            throw ModuleLoadError(.abiMismatch, module: module, file: path,
                                  "the module speaks module ABI version \(abiVersion), this host speaks version \(AGENT_MODULE_ABI_VERSION). Rebuild the module against this runtime's AgentModuleKit (or agent_module.h).")
        }
        guard Int(structSize) >= minimumStructSize else {
            throw ModuleLoadError(.abiMismatch, module: module, file: path,
                                  "the module's agent_module struct_size is \(structSize) bytes; ABI version \(abiVersion) needs at least \(minimumStructSize). Set struct_size = sizeof(agent_module).")
        }
        guard let manifestPointer = description.pointee.manifest_json else {
            throw ModuleLoadError(.invalidManifest, module: module, file: path, "manifest_json is NULL; it must point to the module's JSON manifest")
        }
        let manifestJSON = String(cString: manifestPointer)
        let manifest = try ModuleManifest(json: manifestJSON, module: module, file: path, partialAllowed: deferred)
        if let expectedName, manifest.name != expectedName {
            throw ModuleLoadError(.nameMismatch, module: module, file: path,
                                  "the library calls itself \"\(manifest.name)\", but it was enabled as \"\(expectedName)\". Enable it under its own name or fix the name passed to exportModule.")
        }
        guard description.pointee.run_process != nil else {
            throw ModuleLoadError(.invalidManifest, module: module, file: path, "run_process is NULL; a module must provide it")
        }
        let loaded = LoadedModule(module: module, file: path, manifest: manifest, manifestJSON: manifestJSON, entry: description)
        if let task = manifest.processes.first(where: { $0.kind == "task" }), loaded.taskEntries == nil {
            throw ModuleLoadError(.invalidManifest, module: module, file: path,
                                  "the manifest declares the task type \"\(task.type)\", but task_create or task_run is NULL; a module with task types must provide them")
        }
        return loaded
    }

    /// What a file that is not a regular file is, for the error.
    static func fileKind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }

    /// The checks that need no dlopen: the file exists, is a regular file, is an ELF shared
    /// library for this machine.
    public static func checkFile(path: String, module: String) throws(ModuleLoadError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            if errno == ELOOP {
                throw ModuleLoadError(.notFound, module: module, file: path, "a loop of symbolic links; point the module's entry in enabled_modules at the library itself")
            }
            throw ModuleLoadError(.notFound, module: module, file: path,
                                  "no such file. Build the module (`swift build --product \(module)`) or fix its entry in enabled_modules.")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw ModuleLoadError(.notAFile, module: module, file: path, "not a regular file (\(Self.fileKind(info.st_mode))); expected a shared library lib<name>.so")
        }
        // open and read, not FileHandle: this runs in every worker's start, and Foundation's
        // file handle was a tenth of the module's load there. Non-blocking, and checked again
        // on the open file: a FIFO put in the library's place after the stat would block the
        // open until a writer came (the supervisor's describe and reload call this).
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            throw ModuleLoadError(.notFound, module: module, file: path, "cannot be read: \(String(cString: strerror(errno)))")
        }
        var opened = stat()
        guard fstat(fd, &opened) == 0, (opened.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw ModuleLoadError(.notAFile, module: module, file: path, "not a regular file (\(Self.fileKind(opened.st_mode))); expected a shared library lib<name>.so")
        }
        var head = [UInt8](repeating: 0, count: 64)
        var count = 0
        while count < head.count {
            let n = head.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            count += n
        }
        close(fd)
        head.removeSubrange(count...)
        guard !head.isEmpty else {
            throw ModuleLoadError(.notELF, module: module, file: path, "the file is empty; expected an ELF shared library. Rebuild the module.")
        }
        guard let elf = ELFHeader(head) else {
            let printable = head.prefix(16).allSatisfy { $0 == 9 || $0 == 10 || $0 == 13 || (32..<127).contains($0) }
            throw ModuleLoadError(.notELF, module: module, file: path,
                                  "not an ELF shared library\(printable ? " (it is text: \"\(String(decoding: head.prefix(24), as: UTF8.self).split(separator: "\n").first ?? "")\"…)" : ""); expected lib<name>.so built by `swift build` or `cc -shared`")
        }
        guard elf.elfClass == 2 else {
            throw ModuleLoadError(.wrongArchitecture, module: module, file: path,
                                  "built as a 32-bit ELF file; this host runs 64-bit \(ELFHeader.machineName(ELFHeader.hostMachine)). Rebuild the module for this machine.")
        }
        guard elf.machine == ELFHeader.hostMachine else {
            throw ModuleLoadError(.wrongArchitecture, module: module, file: path,
                                  "built for \(ELFHeader.machineName(elf.machine)); this host is \(ELFHeader.machineName(ELFHeader.hostMachine)). Rebuild the module on (or for) this machine.")
        }
        guard elf.objectType == 3 else {
            throw ModuleLoadError(.notELF, module: module, file: path,
                                  "an ELF file, but not a shared library (type \(elf.objectType)); build the module as a dynamic library (`.library(type: .dynamic)` or `cc -shared -fPIC`)")
        }
    }
}
