import AgentBase
import AgentCore
import Foundation

extension AgentSettings {
    /// The largest settings file read: settings are a few kilobytes, and anything larger is
    /// almost certainly the wrong file.
    public static let maximumFileBytes = 16 << 20

    /// Reads the settings file's bytes. It must be a regular file (or a link to one): a folder,
    /// a FIFO or a device is refused by its kind, and is never read from, so that a FIFO
    /// cannot block and `/dev/zero` cannot fill the memory.
    static func readFile(_ file: String) throws(SettingsError) -> Data {
        func failure(_ message: String) -> SettingsError {
            SettingsError([SettingsIssue(file: file, pointer: "", message: message)])
        }
        // O_NONBLOCK: opening a FIFO without a writer would otherwise wait for one.
        let fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = String(cString: strerror(errno))
            throw failure("cannot read the settings file: \(reason). Pass --settings PATH or create settings.json in this folder.")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("cannot read the settings file: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw failure("expected a settings file (a regular file of JSON), found \(Self.kind(of: info.st_mode)); pass --settings with the path of the agent's settings.json")
        }
        guard info.st_size <= Self.maximumFileBytes else {
            throw failure("expected a settings file of at most \(Self.maximumFileBytes >> 20) MiB, found \(info.st_size) bytes; is this the agent's settings.json?")
        }
        var data = Data(count: Int(info.st_size))
        var total = 0
        while total < data.count {
            let n = data.withUnsafeMutableBytes { read(fd, $0.baseAddress! + total, $0.count - total) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw failure("cannot read the settings file: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            total += n
        }
        data.count = total
        return data
    }

    static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: "a folder"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "a special file"
        }
    }
}
