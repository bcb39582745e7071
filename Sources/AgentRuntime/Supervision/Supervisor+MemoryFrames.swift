import AgentCore
import AgentLoop
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// Shared memory for workers (`context.memory` in the SDK): a `memory` frame from a worker
/// is answered with a `memoryResult` frame, off the loop like the memory commands.
extension Supervisor {
    /// A worker's `context.memory` request (token, then the command as JSON), answered with a
    /// `memoryResult` frame to the same worker once the store has answered.
    func answerMemoryFrame(_ body: UnsafeRawBufferPointer, from process: SupervisedProcess) {
        guard body.count >= 8, let request = try? JSONValue.parse(UnsafeRawBufferPointer(rebasing: body[8...])),
              request["command"]?.stringValue?.hasPrefix("memory_") == true else {
            return replyToMemory(process, pid: process.pid, status: 1, Array("the memory request is not a memory command as JSON".utf8))
        }
        let token = UInt64(littleEndian: body.loadUnaligned(as: UInt64.self))
        guard let memory else { return replyToMemory(process, pid: process.pid, status: 0, Array(Self.memoryUnavailable.serialized().utf8)) }
        var scope = MemoryScope.agent
        if request["scope"]?.stringValue == "run" {
            guard let run = memoryRunScope(token: token, process: process) else {
                let refusal: JSONValue = ["ok": false, "code": "invalid",
                                          "error": "scope .workflowRun is only for a task handler's run that is a step of a workflow run; use the agent-wide scope"]
                return replyToMemory(process, pid: process.pid, status: 0, Array(refusal.serialized().utf8))
            }
            scope = .workflowRun(run)
        }
        let inbox = loop.inbox
        let bound = LoopBound(value: (self, process))
        let pid = process.pid
        Self.answerMemory(request, scope: scope, memory: memory) { answer in
            let bytes = Array(answer.serialized().utf8)
            inbox.post { bound.value.0.replyToMemory(bound.value.1, pid: pid, status: 0, bytes) }
        }
    }

    /// Sends the answer to the worker that asked (not to a worker started since in its place).
    func replyToMemory(_ process: SupervisedProcess, pid: pid_t, status: UInt8, _ bytes: [UInt8]) {
        guard process.hasWorker, process.pid == pid else { return }
        FrameCodec.append(.memoryResult, body: [status] + bytes, to: process.control)
        markDirty(process)
    }

    /// The workflow run whose scope a task handler's run has (see ``TaskRun/workflowRunID``):
    /// nil for a process, or a run that is no workflow step.
    func memoryRunScope(token: UInt64, process: SupervisedProcess) -> String? {
        guard token != 0, let runner = tasks?.moduleRunner as? ModuleTaskRunner, let runID = runner.runID(token: token, process: process) else { return nil }
        return tasks?.runs[runID]?.workflowRunID
    }
}

extension TaskRun {
    /// The workflow run this run is a step of: a workflow step's idempotency key is
    /// "<workflow run id>/<step id>/<step attempt>" (nil for any other run).
    var workflowRunID: String? {
        guard requestedBy == .workflow, let slash = idempotencyKey.firstIndex(of: "/"), slash > idempotencyKey.startIndex else { return nil }
        return String(idempotencyKey[..<slash])
    }
}
