import AgentCore
import Foundation

extension ModuleLoadError.Code {
    /// The module's file, or a folder above it, could be changed by another user.
    public static let untrustedFile = ModuleLoadError.Code(rawValue: "untrusted_module_file")
}

extension ModuleLocator {
    /// Refuses a module that another user could have replaced, the way sshd treats keys: the
    /// library must be owned by the agent's user or root and writable by no one else (writable
    /// by the owner's private group is fine), and so must every folder above it (and a module's source folder, which the agent builds),
    /// except that a folder with the sticky bit (such as /tmp) may be writable by others, since
    /// they cannot rename or remove what they do not own there. Symbolic links on the way must
    /// be owned by the agent's user or root. Checked before any worker loads the module;
    /// `"trust_module_files": true` in the settings skips it.
    ///
    /// A library that does not exist yet passes (the loader says it is missing).
    public static func checkTrust(_ location: ModuleLocation, userID: uid_t = geteuid()) throws(ModuleLoadError) {
        func refuse(_ problem: String) -> ModuleLoadError {
            ModuleLoadError(.untrustedFile, module: location.name, file: location.library,
                            "refusing to load it: \(problem). Another user could replace the code the agent runs. If you trust the file anyway, set \"trust_module_files\": true in the settings")
        }
        // A jsonl/1 module's folder holds the program the worker runs: all of it, like sources.
        if location.programManifest != nil {
            let folder = (location.library as NSString).deletingLastPathComponent
            if let problem = Self.unsafeAncestry(of: folder, userID: userID) ?? Self.unsafeContents(of: folder, userID: userID) {
                throw refuse(problem)
            }
        }
        if let source = location.sourceDirectory {
            if let problem = Self.unsafeAncestry(of: source, userID: userID) ?? Self.unsafeContents(of: source, userID: userID) {
                throw refuse(problem)
            }
        }
        var info = stat()
        guard stat(location.library, &info) == 0 else { return }
        if let problem = Self.ownershipProblem(location.library, info, userID: userID, folder: false) {
            throw refuse(problem)
        }
        // The folders above the library as written and, if it is a link, above its target.
        var folders = [(location.library as NSString).deletingLastPathComponent]
        var link = stat()
        if lstat(location.library, &link) == 0, (link.st_mode & S_IFMT) == S_IFLNK {
            if link.st_uid != userID, link.st_uid != 0 {
                throw refuse("the symbolic link \(location.library) is owned by uid \(link.st_uid), not by the agent's user (uid \(userID)) or root")
            }
            if let real = realpath(location.library, nil) {
                folders.append((String(cString: real) as NSString).deletingLastPathComponent)
                free(real)
            }
        }
        for folder in folders {
            if let problem = Self.unsafeAncestry(of: folder, userID: userID) { throw refuse(problem) }
        }
    }

    /// What is wrong with one file or folder, with the command that fixes it; nil when safe.
    package static func ownershipProblem(_ path: String, _ info: stat, userID: uid_t, folder: Bool) -> String? {
        let what = folder ? "the folder" : "the file"
        if info.st_uid != userID, info.st_uid != 0 {
            return "\(what) \(path) is owned by uid \(info.st_uid)\(Self.userName(info.st_uid).map { " (\($0))" } ?? ""), not by the agent's user (uid \(userID)) or root; fix with `chown \(userID) \(path)`"
        }
        let mode = info.st_mode & 0o7777
        let sticky = folder && mode & S_ISVTX != 0
        let unsafeGroup = mode & 0o020 != 0 && !isPrivateGroup(info.st_gid, of: info.st_uid)
        if (mode & 0o002 != 0 || unsafeGroup), !sticky {
            let by = mode & 0o002 != 0 ? "everyone" : "its group (gid \(info.st_gid)\(groupName(info.st_gid).map { ", \($0)" } ?? ""))"
            return "\(what) \(path) is writable by \(by) (mode \(String(mode, radix: 8))); fix with `chmod go-w \(path)`"
        }
        return nil
    }

    /// Whether `gid` is the owner's private group (its primary group, listing no one else as
    /// a member): then writable by the group is writable by the owner alone, as Debian's sshd
    /// accepts (with `umask 002` every file a user creates is group-writable).
    package static func isPrivateGroup(_ gid: gid_t, of uid: uid_t) -> Bool {
        guard let user = getpwuid(uid), user.pointee.pw_gid == gid, let name = user.pointee.pw_name,
              let group = getgrgid(gid) else { return false }
        let owner = String(cString: name)
        var member = group.pointee.gr_mem
        while let pointer = member?.pointee {
            if String(cString: pointer) != owner { return false }
            member = member?.advanced(by: 1)
        }
        return true
    }

    package static func groupName(_ gid: gid_t) -> String? {
        guard let entry = getgrgid(gid), let name = entry.pointee.gr_name else { return nil }
        return String(cString: name)
    }

    /// The first unsafe folder from `folder` up to `/` (the folders as written and, where
    /// links lead elsewhere, the real ones), or nil.
    package static func unsafeAncestry(of folder: String, userID: uid_t) -> String? {
        var chains = [URL(fileURLWithPath: folder).standardizedFileURL.path]
        if let real = realpath(folder, nil) {
            let path = String(cString: real)
            free(real)
            if path != chains[0] { chains.append(path) }
        }
        for chain in chains {
            var current = chain
            while true {
                var info = stat()
                guard lstat(current, &info) == 0 else { return nil }
                if (info.st_mode & S_IFMT) == S_IFLNK {
                    if info.st_uid != userID, info.st_uid != 0 {
                        return "the symbolic link \(current) is owned by uid \(info.st_uid), not by the agent's user (uid \(userID)) or root"
                    }
                    guard stat(current, &info) == 0 else { return nil }
                }
                if let problem = ownershipProblem(current, info, userID: userID, folder: true) { return problem }
                if current == "/" || current.isEmpty { break }
                current = (current as NSString).deletingLastPathComponent
            }
        }
        return nil
    }

    /// The first file or folder under a module's source folder (its build output excluded)
    /// that another user could change, or nil.
    package static func unsafeContents(of source: String, userID: uid_t) -> String? {
        guard let walker = FileManager.default.enumerator(atPath: source) else { return nil }
        while let relative = walker.nextObject() as? String {
            if relative.hasPrefix(".build") {
                walker.skipDescendants()
                continue
            }
            let path = source + "/" + relative
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFLNK {
                if info.st_uid != userID, info.st_uid != 0 {
                    return "the symbolic link \(path) is owned by uid \(info.st_uid), not by the agent's user (uid \(userID)) or root"
                }
                continue
            }
            if let problem = ownershipProblem(path, info, userID: userID, folder: kind == S_IFDIR) { return problem }
        }
        return nil
    }

    package static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }
}
