import JSONSchema

/// Trigger cycles, found when the settings are validated: tasks and workflows whose
/// `on_event` types and the events they publish start one another without end. Two
/// workflows that did so validated and then ran 1,500 runs a second until a reload.
///
/// The graph: a task publishes its runs' events (`task.queued` … `task.succeeded`), a
/// workflow its `publish` steps' types, its own events (`workflow.started` …) and the events
/// of the task runs its task steps make; each of them starts every task and workflow whose
/// `on_event` has that type, but for what the runtime skips already (a task's own events do
/// not start it; a workflow's `publish` steps do not start it). A cycle is refused unless one
/// of its `on_event`s says `"cycle": "intended"` (a `where` that ends it, say).
package enum TriggerCycles {
    /// What a task publishes for each of its runs (`task.` + the run's status and its steps).
    package static let taskEvents = ["task.queued", "task.started", "task.retrying", "task.interrupted", "task.succeeded", "task.failed",
                             "task.timed_out", "task.cancelled", "task.abandoned", "task.assigned", "task.reassigned"]
    /// What a workflow publishes for each of its runs.
    package static let workflowEvents = ["workflow.started", "workflow.succeeded", "workflow.failed", "workflow.cancelled"]

    /// The `on_event` value that lets a cycle through.
    package static let intended = "intended"

    package struct Node: Hashable, Comparable {
        package var isWorkflow: Bool
        package var name: String

        package var description: String { (isWorkflow ? "workflow " : "task ") + name }
        package var pointer: String { (isWorkflow ? "/workflows/" : "/tasks/") + JSONPointer.escape(name) + "/on_event" }

        package static func < (a: Node, b: Node) -> Bool { (a.isWorkflow ? 1 : 0, a.name) < (b.isWorkflow ? 1 : 0, b.name) }
    }

    /// An event a node publishes: its type, the task whose run it is about (task events), and
    /// whether a workflow's own `publish` step sends it.
    package struct Output {
        package var type: String
        package var task: String?
        package var ownPublish = false
        /// How the message says it: `publishes order.x`, `runs task t, which publishes task.failed`.
        package var phrase: String
    }

    package struct Edge {
        package var to: Node
        package var output: Output
    }

    /// One issue (the `on_event` pointer of a task or workflow of the cycle, and the path)
    /// per cycle that no `on_event` on it marks intended.
    package static func issues(tasks: [TaskDefinition], workflows: [WorkflowDefinition], document: JSONValue) -> [(pointer: String, message: String)] {
        var listeners: [String: [Node]] = [:]
        var outputs: [Node: [Output]] = [:]
        func marked(_ node: Node) -> Bool {
            document[node.isWorkflow ? "workflows" : "tasks"]?[node.name]?["on_event"]?["cycle"]?.stringValue == intended
        }
        for task in tasks {
            let node = Node(isWorkflow: false, name: task.name)
            if let trigger = task.onEvent, !marked(node) { listeners[trigger.type, default: []].append(node) }
            outputs[node] = taskEvents.map { Output(type: $0, task: task.name, phrase: "publishes \($0)") }
        }
        for workflow in workflows {
            let node = Node(isWorkflow: true, name: workflow.name)
            if let trigger = workflow.onEvent, !marked(node) { listeners[trigger.type, default: []].append(node) }
            outputs[node] = self.outputs(of: workflow)
        }
        let graph = Graph(listeners: listeners, outputs: outputs)
        return graph.cycles().map { cycle in
            var text = cycle[0].from.description
            for (index, hop) in cycle.enumerated() {
                text += " " + hop.edge.output.phrase + " → " + hop.edge.to.description
                if index < cycle.count - 1 { text += " on_event " + hop.edge.output.type }
            }
            let message = "a trigger cycle: \(text), and so on without end; break it (another event type, or a task or workflow "
                + "that does not publish it), or, if a \"where\" ends it, add \"cycle\": \"intended\" to an on_event of the path"
            return (cycle[0].from.pointer, message)
        }
    }

    /// What a workflow's runs publish: its `publish` steps, its own events (an approval's
    /// too), and the events of its task steps' runs.
    package static func outputs(of workflow: WorkflowDefinition) -> [Output] {
        var found: [Output] = []
        var seen: Set<String> = []
        func add(_ output: Output) {
            if seen.insert(output.phrase).inserted { found.append(output) }
        }
        for type in workflowEvents { add(Output(type: type, phrase: "publishes \(type)")) }
        for (_, step) in WorkflowSettings.pointers(of: workflow) {
            switch step.kind {
            case .publish(let type, _):
                add(Output(type: type, ownPublish: true, phrase: "publishes \(type)"))
            case .approval:
                add(Output(type: "workflow.approval_requested", phrase: "publishes workflow.approval_requested"))
            case .task(let name, _, _, _):
                for type in taskEvents { add(Output(type: type, task: name, phrase: "runs task \(name), which publishes \(type)")) }
            default:
                break
            }
        }
        return found
    }

    /// The graph and its cycles: one per strongly connected part that holds one.
    package struct Graph {
        package var listeners: [String: [Node]]
        package var outputs: [Node: [Output]]

        package func edges(from node: Node) -> [Edge] {
            var edges: [Edge] = []
            for output in outputs[node] ?? [] {
                for listener in listeners[output.type] ?? [] {
                    // What the runtime skips: a task's own runs' events, a workflow's own publish.
                    if !listener.isWorkflow, output.task == listener.name { continue }
                    if listener.isWorkflow, output.ownPublish, listener == node { continue }
                    edges.append(Edge(to: listener, output: output))
                }
            }
            return edges
        }

        /// The shortest cycle through the first node (in name order) of each strongly
        /// connected part with a cycle, as its hops.
        package func cycles() -> [[(from: Node, edge: Edge)]] {
            let nodes = Set(listeners.values.flatMap { $0 }).sorted()
            var components = Components(graph: self)
            for node in nodes where components.index[node] == nil { components.visit(node) }
            return components.parts.compactMap { part in
                let members = Set(part)
                guard let start = part.min() else { return nil }
                return shortestCycle(from: start, within: members)
            }.sorted { $0[0].from < $1[0].from }
        }

        /// Breadth first from `start` back to it, within `members`.
        package func shortestCycle(from start: Node, within members: Set<Node>) -> [(from: Node, edge: Edge)]? {
            var cameBy: [Node: (from: Node, edge: Edge)] = [:]
            var queue = [start]
            var head = 0
            while head < queue.count {
                let node = queue[head]
                head += 1
                for edge in edges(from: node) where members.contains(edge.to) {
                    if edge.to == start {
                        var path = [(from: node, edge: edge)]
                        var current = node
                        while current != start, let previous = cameBy[current] {
                            path.insert(previous, at: 0)
                            current = previous.from
                        }
                        return path
                    }
                    if cameBy[edge.to] == nil {
                        cameBy[edge.to] = (node, edge)
                        queue.append(edge.to)
                    }
                }
            }
            return nil
        }
    }

    /// Tarjan's strongly connected components, keeping those with a cycle.
    package struct Components {
        package let graph: Graph
        package var index: [Node: Int] = [:]
        package var lowest: [Node: Int] = [:]
        package var stack: [Node] = []
        package var onStack: Set<Node> = []
        package var parts: [[Node]] = []

        package init(graph: Graph) { self.graph = graph }

        package mutating func visit(_ node: Node) {
            index[node] = index.count
            lowest[node] = index[node]
            stack.append(node)
            onStack.insert(node)
            var selfLoop = false
            for edge in graph.edges(from: node) {
                if edge.to == node { selfLoop = true }
                if index[edge.to] == nil {
                    visit(edge.to)
                    lowest[node] = min(lowest[node]!, lowest[edge.to]!)
                } else if onStack.contains(edge.to) {
                    lowest[node] = min(lowest[node]!, index[edge.to]!)
                }
            }
            guard lowest[node] == index[node] else { return }
            var part: [Node] = []
            while let top = stack.popLast() {
                onStack.remove(top)
                part.append(top)
                if top == node { break }
            }
            if part.count > 1 || selfLoop { parts.append(part) }
        }
    }
}
