import Foundation

/// How a worker ended, as ``Supervisor/reap(_:)`` found it: what the restart policy decides on.
struct WorkerExit {
    var pid: pid_t
    var code: Int32?
    var how: String
    var ranFor: Double
    var wasReady: Bool
    var wasStopping: Bool
}
