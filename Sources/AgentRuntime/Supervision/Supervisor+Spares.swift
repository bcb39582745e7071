import AgentCore
import AgentSupervision
import CAgentSystem
import Foundation
import Logging

extension Supervisor {
    /// After a process of a module crashed, the supervisor keeps one warm spare worker for that
    /// module: spawned, the module already loaded, waiting for a start frame. The next restart
    /// adopts it instead of paying for exec, dynamic linking and dlopen. Healthy agents keep no
    /// spare; a spare is made only once the restarted worker is ready, so it never competes
    /// with it.
    func takeSpare(for library: String) -> LaunchedWorker? {
        guard let spare = spares.removeValue(forKey: library) else { return nil }
        loop.unregister(spare.pidFD)
        loop.unregister(spare.stdoutFD)
        loop.unregister(spare.stderrFD)
        return spare
    }

    /// Called when a worker reported ready: make the module's spare if one is wanted.
    func replenishSpare(for library: String) {
        guard sparesWanted.contains(library), spares[library] == nil, !stopping,
              library != BuiltinModules.chatLocation.library else { return }
        let module = processes.first { $0.module.library == library }?.module.name ?? library
        switch launchWorker(arguments: ["agent-worker", "--spare", library, "--module", module]) {
        case .success(let spare):
            spares[library] = spare
            if spare.pidFD >= 0 {
                loop.register(spare.pidFD) { [unowned self] _ in spareDied(library, pid: spare.pid) }
            }
            for fd in [spare.stdoutFD, spare.stderrFD] {
                loop.register(fd) { [unowned self] _ in drainSpareOutput(fd) }
            }
        case .failure(let error):
            logger.warning("cannot start a spare worker for \(module): \(error)")
        }
    }

    private func spareDied(_ library: String, pid: pid_t) {
        guard let spare = spares[library], spare.pid == pid else { return }
        var status: Int32 = 0
        guard waitpid(pid, &status, WNOHANG) == pid || errno == ECHILD else { return }
        spares[library] = nil
        for fd in spare.fds where fd >= 0 {
            loop.unregister(fd)
            close(fd)
        }
    }

    private func drainSpareOutput(_ fd: Int32) {
        while true {
            let n = read(fd, readBuffer.baseAddress, readBuffer.count)
            if n < 0, errno == EINTR { continue }
            if n == 0 { loop.unregister(fd) }
            if n <= 0 { return }
        }
    }

    /// Kills and reaps every spare (at stop).
    func dropSpares() {
        for (library, spare) in spares {
            Glibc.kill(spare.pid, SIGKILL)
            var status: Int32 = 0
            while waitpid(spare.pid, &status, 0) < 0, errno == EINTR {}
            for fd in spare.fds where fd >= 0 {
                loop.unregister(fd)
                close(fd)
            }
            spares[library] = nil
        }
    }
}
