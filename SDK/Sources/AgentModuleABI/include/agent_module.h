/*
 * agent_module.h — the whole contract between an AgentRuntime host and a module.
 *
 * A module is a shared library that exports one C symbol, AGENT_MODULE_ENTRY_SYMBOL,
 * returning a pointer to a static `agent_module` description. Nothing else crosses the
 * boundary: no Swift types, no shared runtime state. Text crosses as UTF-8 (lengths are
 * given; strings are also NUL-terminated where the header says so), structured data as
 * JSON, event payloads as opaque bytes (JSON by convention).
 *
 * A module written in C, Rust, Zig or Swift (any compiler version) loads as long as it
 * speaks this header.
 *
 * Versioning
 *   The host reads `abi_version` and `struct_size` before anything else. A module whose
 *   `abi_version` differs from the host's AGENT_MODULE_ABI_VERSION is refused. Fields are
 *   only ever appended within one ABI version; `struct_size` tells the host which ones the
 *   module knows (a field beyond `struct_size` is treated as NULL/absent).
 *
 * Threads
 *   The host calls `run_process` once per worker process, on a thread of its choosing, and
 *   the call blocks until the process ends. The module may call the host callbacks from any
 *   thread while `run_process` has not returned; never after it returned.
 *   A task executor (a worker that runs a module's task handler) calls `task_create` once,
 *   then `task_run` (or `task_prepare` and `task_start`) for each run and `task_cancel` to
 *   cancel one: one call at a time, though not always from the same host thread; the
 *   callbacks may be called from any thread until the worker exits.
 *
 * Ownership (summary; each declaration repeats its own rule)
 *   - Pointers the host passes in are owned by the host and valid only for the duration of
 *     the call, unless the declaration says otherwise. Copy what you keep.
 *   - Pointers the module passes to a callback are owned by the module; the host copies what
 *     it keeps before the callback returns.
 *   - The manifest returned by the module is static: valid for the life of the process.
 */
#ifndef AGENT_MODULE_H
#define AGENT_MODULE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version this header describes. Bumped on any incompatible change. */
#define AGENT_MODULE_ABI_VERSION 2u

/* ABI history
 *   1  datasources, monitors, logic adapters.
 *   2  task handlers: `"kind": "task"` in the manifest, the task_* entry points of
 *      agent_module and the task_* callbacks of agent_host_api. A module built against
 *      version 1 is refused (rebuild it with this SDK); its struct is never read past
 *      `struct_size`. */

/** The one symbol a module exports: `const agent_module *agent_module_entry(void);` */
#define AGENT_MODULE_ENTRY_SYMBOL "agent_module_entry"

/**
 * Optional: `void agent_module_defer_manifest(void);` A host that loads the module only to run
 * its processes, adapters or task handlers (not to describe it: it read the whole manifest in
 * another process before) calls it, when the module exports it, before the entry. The
 * description's `manifest_json` may then be partial — the types and kinds alone:
 *   {"name": "sample", "version": "1.0.0", "partial": true,
 *    "processes": [{"type": "trade_feed", "kind": "datasource"}, ...]}
 * so that a module whose schemas are costly to build (the Swift SDK reads them by reflection)
 * does not build them in every worker. A module without the symbol always returns the whole
 * manifest; a host that did not call it refuses a partial one.
 */
#define AGENT_MODULE_DEFER_MANIFEST_SYMBOL "agent_module_defer_manifest"

/**
 * Loaded once, forked many times: the host loads a module library once in a process of its own
 * (the module's zygote: `agent-worker --zygote NAME` in ps) and forks each of the module's
 * workers from it, so the library's constructors, its entry and the defer call above run there,
 * once, not in each worker. What they set up is inherited by every worker: keep per-process
 * state (a pid, a random seed, a connection) for run_process. A library whose load leaves a
 * thread, an open descriptor, a child process, memory marked MADV_DONTFORK or MADV_WIPEONFORK,
 * a new session or process group, or the child-subreaper flag is loaded by each worker instead,
 * as is one that exports
 * `agent_module_no_zygote` (any symbol of that name) to ask for it.
 */
#define AGENT_MODULE_NO_ZYGOTE_SYMBOL "agent_module_no_zygote"

/**
 * Optional: `void agent_module_warm_up(void);` The zygote calls it once, after the entry and
 * before it forks any worker, when the module exports it; a worker that loads the module
 * itself never does. A module builds there what each of its workers would otherwise build the
 * same way at start — the Swift SDK reads every type's settings schema by reflection,
 * decodes `{}` as settings and makes the metadata its process runner looks up, so that the
 * type metadata, conformances and schemas are the zygote's and every worker inherits them.
 * It must leave what a constructor must not (above), and, since only the workers forked from
 * the zygote would inherit it, the process's own state as it found it: the working folder,
 * umask, signal dispositions, resource limits, priority, environment and fds 0-3. A warm-up
 * that leaves any of these costs the module its zygote. What it prints through stdio is
 * flushed in the zygote (where output goes nowhere).
 */
#define AGENT_MODULE_WARM_UP_SYMBOL "agent_module_warm_up"

/** Status codes returned by callbacks and entry points. */
enum {
    AGENT_OK = 0,
    /** The operation failed; details were logged or written to the error buffer. */
    AGENT_ERROR = 1,
    /** `next_event` timed out with no event. */
    AGENT_TIMEOUT = 2,
    /** The host asked the process to stop; `next_event` returns this once stop is requested
        and no event is pending. The module should return from `run_process` promptly. */
    AGENT_STOPPED = 3,
    /** `load_state`: the process has no saved state yet. */
    AGENT_NO_STATE = 4,
    /** Settings could not be decoded or are invalid for this process type. */
    AGENT_BAD_SETTINGS = 5,
    /** The process type named is not provided by this module. */
    AGENT_UNKNOWN_TYPE = 6,
    /** `save_state`: the host's store cannot write now (the disk is full, the database is
        read-only or failing). The state was not stored, but the host keeps it for this run (a
        restarted worker of the process loads it). Not fatal: the process should go on and
        save again later; saves succeed again once the store can write. Hosts before this
        code returned AGENT_ERROR for it. */
    AGENT_STORE_UNAVAILABLE = 7
};

/** Log levels for `agent_host_api.log` and message levels for `send_message`. */
enum {
    AGENT_LOG_DEBUG = 0,
    AGENT_LOG_INFO = 1,
    AGENT_LOG_WARNING = 2,
    AGENT_LOG_ERROR = 3,
    AGENT_LOG_CRITICAL = 4
};

/**
 * An event delivered to a process by `next_event`.
 *
 * Every pointer in it is owned by the host and stays valid, its bytes unchanged, until the next
 * call to `next_event` or `next_events` from the same process, or until `run_process` returns,
 * whichever is first. Events handed out together may share their `type` or `source` pointer
 * when those are equal. `type` and `source` are NUL-terminated as well as sized; `payload` is
 * not terminated.
 */
typedef struct agent_event {
    const char *type;
    size_t type_len;
    /** Name of the process that emitted the event. */
    const char *source;
    size_t source_len;
    /** Time the event was emitted, nanoseconds since the Unix epoch (UTC). */
    int64_t time_ns;
    const uint8_t *payload;
    size_t payload_len;
} agent_event;

/**
 * Callbacks the host offers a running process. The table and `host_ctx` are owned by the
 * host and valid until `run_process` returns. Every callback is thread-safe.
 */
typedef struct agent_host_api {
    /** AGENT_MODULE_ABI_VERSION of the host. */
    uint32_t abi_version;
    /** sizeof(agent_host_api) as the host compiled it; callbacks past it are absent. */
    uint32_t struct_size;
    /** Opaque; pass it as the first argument of every callback. */
    void *host_ctx;

    /** Emits an event of `type` (UTF-8, `type_len` bytes) with an opaque payload (JSON by
        convention). Both buffers are the module's; the host copies them before returning.
        Events from one process are delivered to subscribers in emission order. */
    int32_t (*emit)(void *host_ctx, const char *type, size_t type_len,
                    const uint8_t *payload, size_t payload_len);

    /** Sends a human-readable message (an alert, a notice) at `level` to the agent's
        conversation and console. `text` is the module's; copied before returning. */
    int32_t (*send_message)(void *host_ctx, int32_t level, const char *text, size_t text_len);

    /** Writes a line to the agent's log, tagged with the process name. Copied. */
    void (*log)(void *host_ctx, int32_t level, const char *text, size_t text_len);

    /** Waits up to `timeout_ms` (negative: forever) for the next event delivered to this
        process. Returns AGENT_OK and fills `*out` (host-owned; see agent_event), or
        AGENT_TIMEOUT, or AGENT_STOPPED once a stop was requested. */
    int32_t (*next_event)(void *host_ctx, int64_t timeout_ms, agent_event *out);

    /** Loads the state this process saved last (its own only). On AGENT_OK, `*data` and
        `*len` point to host-owned bytes valid until the next `load_state` call or until
        `run_process` returns. AGENT_NO_STATE if nothing was saved yet. Blocks until the host
        answers. */
    int32_t (*load_state)(void *host_ctx, const uint8_t **data, size_t *len);

    /** Replaces this process's saved state with `len` bytes (copied). The state survives a
        crash of the worker. Returns once the host acknowledged it: AGENT_OK when stored,
        AGENT_STORE_UNAVAILABLE when the store cannot write now (not fatal: go on), else
        AGENT_ERROR. */
    int32_t (*save_state)(void *host_ctx, const uint8_t *data, size_t len);

    /** Tells the host's watchdog that the process is alive. Cheap; call it at least once per
        watchdog period if the process blocks its run loop. */
    void (*heartbeat)(void *host_ctx);

    /** Returns 1 once the host asked the process to stop, else 0. */
    int32_t (*stop_requested)(void *host_ctx);

    /** Registers `handler(arg)` to be called once, from a host thread, when the host asks
        the process to stop (at once, on the calling thread, if it already did). `arg` is
        the module's and must stay valid until `run_process` returns. A later registration
        replaces an earlier one. Lets a module stop without polling `stop_requested`. */
    void (*set_stop_handler)(void *host_ctx, void (*handler)(void *arg), void *arg);

    /** If > 0, the host's watchdog kills the process when it sends no heartbeat for this
        many milliseconds. AgentModuleKit sends heartbeats on its own while the process's run
        loop is responsive (it awaits, emits or receives); a C module calls `heartbeat`. */
    int64_t watchdog_ms;

    /** Runs a read-only SQL query over the agent's store (tables `events`: id, time (seconds
        since the epoch), type, source, payload (JSON text); `history`). `params_json` is a JSON
        array of values for the `?` placeholders (NULL: none). On AGENT_OK, `*json` and
        `*json_len` point to a host-owned JSON array of row objects, valid until the calling
        thread's next `query` call (or its end): handlers querying at once from several
        threads each get their own answer. On AGENT_ERROR they point to a message. Blocks
        until the host answers. */
    int32_t (*query)(void *host_ctx, const char *sql, size_t sql_len,
                     const char *params_json, size_t params_len,
                     const uint8_t **json, size_t *json_len);

    /** Registers `notify(arg)` to be called from a host thread whenever events become
        available to `next_event` after it found none, and once when the host asks the process
        to stop. Lets a module wait for events without a thread blocked in `next_event`:
        after `next_event(..., 0, ...)` returned AGENT_TIMEOUT, the next `notify` says that
        calling it again will find something. `notify` must not block nor call
        `set_event_notifier`; `arg` is the module's and must stay valid until `run_process`
        returns. NULL unregisters; once `set_event_notifier` returns, no call to the previous
        `notify` is running. (Hosts that predate it have a smaller struct_size.) */
    void (*set_event_notifier)(void *host_ctx, void (*notify)(void *arg), void *arg);

    /** Like `next_event`, for up to `capacity` events at once: on AGENT_OK, `out[0..*count)`
        (1 ≤ *count ≤ capacity) hold the next events in order, their pointers host-owned and
        valid until the next `next_event` or `next_events` call. A busy monitor pays one call,
        not one per event. */
    int32_t (*next_events)(void *host_ctx, int64_t timeout_ms, agent_event *out, size_t capacity, size_t *count);

    /* ABI 2: task runs. `run_token` is the host's name for one run (see agent_task_run);
       a token whose run was completed is ignored. Present in a task executor's table only
       (NULL in a process's). */

    /** Reports how far a run got: `fraction` in [0, 1], or negative when unknown; `message`
        (UTF-8, the module's, copied; NULL: none). Counts as a heartbeat. */
    int32_t (*task_progress)(void *host_ctx, uint64_t run_token, double fraction,
                             const char *message, size_t message_len);

    /** Tells the host's watchdog that the run is alive. Cheap; a handler whose task type
        declares `heartbeat_timeout` calls it (or `task_progress`) at least that often, or its
        worker is killed and the run failed. */
    void (*task_heartbeat)(void *host_ctx, uint64_t run_token);

    /** Returns 1 once the host asked to cancel the run (`task_cancel` was called), else 0. */
    int32_t (*task_cancelled)(void *host_ctx, uint64_t run_token);

    /** Ends a run, exactly once: `status` AGENT_OK with `data` the output (UTF-8 JSON), or
        AGENT_ERROR with `data` a human-readable reason. `data` is the module's; copied before
        returning. May be called before `task_run` returns. */
    int32_t (*task_complete)(void *host_ctx, uint64_t run_token, int32_t status,
                             const uint8_t *data, size_t data_len);

    /** Shared memory (named JSON values of the agent, or of a workflow run). `request` is a
        JSON object: {"command": "memory_get"|"memory_set"|"memory_delete"|"memory_list", "key",
        "value", "expected_version", "prefix", "limit", "scope": "agent"|"run"}, as the
        agent's memory commands; "run" is the scope of the workflow run whose step the run of
        `run_token` is (0: a process, which has none). On AGENT_OK, `*json`/`*json_len` point to
        the host-owned answer ({"ok": true, …} or {"ok": false, "code", "error"}), valid until
        the calling thread's next `memory` call; AGENT_ERROR when the host could not ask (then a message).
        Blocks until the agent answers. (Hosts that predate it have a smaller struct_size.) */
    int32_t (*memory)(void *host_ctx, uint64_t run_token, const char *request, size_t request_len,
                      const uint8_t **json, size_t *json_len);

    /** Blocks the calling thread until `next_events` would find events without waiting, the
        host asks the process to stop, `wake_events_wait` is called, or `timeout_ms` passes
        (negative: no limit). Returns AGENT_OK (events are there; none is taken), AGENT_STOPPED,
        or AGENT_TIMEOUT (timed out, or woken). For a module whose own thread runs its code and
        sleeps here when it has nothing else to do: the supervisor's delivery wakes this thread
        itself, with no host thread in between (the notifier costs one more thread wakeup per
        batch). Call it from the thread that receives, one at a time. (Hosts that predate it
        have a smaller struct_size.) */
    int32_t (*wait_events)(void *host_ctx, int64_t timeout_ms);

    /** Makes the `wait_events` in progress return AGENT_TIMEOUT at once, or else the next
        one. From any thread; never blocks. */
    void (*wake_events_wait)(void *host_ctx);
} agent_host_api;

/**
 * Runs one process of `process_type` until it ends or the host asks it to stop.
 *
 * `process_type`, `process_name`: NUL-terminated, host-owned, valid for the call.
 * `settings_json`: the process's settings (UTF-8 JSON object, host-level keys removed),
 *   `settings_len` bytes, host-owned, valid for the call.
 * `host`: callbacks, valid until this function returns.
 * `error_buf`: host-owned buffer of `error_buf_len` bytes; on failure the module writes a
 *   NUL-terminated, human-readable reason into it (truncated to fit).
 *
 * Returns AGENT_OK when the process ended normally (e.g. after a stop request),
 * AGENT_BAD_SETTINGS, AGENT_UNKNOWN_TYPE or AGENT_ERROR otherwise.
 */
typedef int32_t (*agent_run_process_fn)(const char *process_type, const char *process_name,
                                         const char *settings_json, size_t settings_len,
                                         const agent_host_api *host,
                                         char *error_buf, size_t error_buf_len);

/** Logic adapters (used by the runtime's chatbot process). Modules without adapters set these
    to NULL. A handle returned by `adapter_create` is owned by the module and released only
    by `adapter_destroy`; `host` stays valid until then. */
typedef void *(*agent_adapter_create_fn)(const char *adapter_type,
                                         const char *settings_json, size_t settings_len,
                                         const agent_host_api *host,
                                         char *error_buf, size_t error_buf_len);
/** Confidence in [0, 1] that the adapter can answer `message` (UTF-8, host-owned), or a
    negative value to let the host score it from the adapter's usage examples. */
typedef double (*agent_adapter_score_fn)(void *adapter, const char *message, size_t message_len);
/** Answers `message`; the reply is delivered through `reply(reply_ctx, text, len)` before
    the function returns (text is module-owned and copied by the host). */
typedef int32_t (*agent_adapter_respond_fn)(void *adapter, const char *message, size_t message_len,
                                            void *reply_ctx,
                                            void (*reply)(void *reply_ctx, const char *text, size_t len));
typedef void (*agent_adapter_destroy_fn)(void *adapter);

/**
 * One run of a task handler (ABI 2), as `task_run` receives it. Every pointer is host-owned
 * and valid for the call only: copy what you keep.
 */
typedef struct agent_task_run {
    /** The host's name for this run: pass it to the task_* callbacks. */
    uint64_t run_token;
    /** The run's id (UTF-8, NUL-terminated): the same for every attempt of one run, so an
        idempotency key. */
    const char *run_id;
    size_t run_id_len;
    /** 1 for the first attempt. */
    uint32_t attempt;
    /** The run's input: UTF-8 JSON (any value), valid against the task type's
        `input_schema`. Not NUL-terminated. */
    const uint8_t *input_json;
    size_t input_len;
    /** The key to make the run's effect idempotent with (UTF-8, NUL-terminated): the run id,
        or what the requester gave — a workflow step's "<workflow run>/<step>/<attempt>",
        the same when the step runs again after a crash. Appended in ABI 2's table. */
    const char *idempotency_key;
    size_t idempotency_key_len;
} agent_task_run;

/** Task handlers (ABI 2). Modules without task types set these to NULL.
    `task_create` makes a handler of `task_type` from its settings (UTF-8 JSON, host-owned,
    valid for the call) once per executor worker; the handle is the module's and `host` stays
    valid for the life of the worker. On failure it returns NULL with a NUL-terminated reason
    in `error_buf`. */
typedef void *(*agent_task_create_fn)(const char *task_type,
                                      const char *settings_json, size_t settings_len,
                                      const agent_host_api *host,
                                      char *error_buf, size_t error_buf_len);
/** Starts a run on `handler`. Must return promptly (the host calls it on the thread that
    reads the supervisor's frames, or, for a run sent ahead of its instant and not prepared,
    on the thread that held it): do the work on a task or thread of your own, or, when it
    is quick, before returning. The run ends when the module calls `host->task_complete`
    for `run->run_token`, exactly once. Several runs may be going at once (the task's
    `max_concurrent`). Returns AGENT_OK, or AGENT_ERROR when it could not start the run (the
    host then fails it unless `task_complete` was called). */
typedef int32_t (*agent_task_run_fn)(void *handler, const agent_task_run *run);
/** Asks the run of `run_token` to end early (cancelled, or timed out). The module cancels
    its work and calls `task_complete` (an AGENT_ERROR saying it was cancelled is fine); the
    host kills the worker if it does not within its grace. Returns promptly. Called only for a
    run the module was given (by `task_run` or `task_prepare`), possibly one it is completing on
    another thread at that moment (then nothing is left to cancel); a run cancelled before it
    reached the module is ended by the host. */
typedef void (*agent_task_cancel_fn)(void *handler, uint64_t run_token);
/** Optional (appended in ABI 2; NULL, or past `struct_size`, when the module does not prepare
    runs): makes ready a run that must not start before a later instant — a schedule's fire,
    sent to the worker ahead of it. The module may copy and decode the run's input and set up
    what it needs, but must not begin the run's work, nor complete it, before `task_start`
    names it; a prepared run cancelled first (`task_cancel`) never starts, and the module
    completes it with AGENT_ERROR. Returns promptly: AGENT_OK, or AGENT_ERROR when it did not
    prepare the run (the host then starts it with `task_run` at its instant). A host only
    prepares runs when the module has `task_prepare`, `task_start` and `task_cancel`. */
typedef int32_t (*agent_task_prepare_fn)(void *handler, const agent_task_run *run);
/** Starts the prepared runs `run_tokens[0..count)`, as soon as possible and in that order: the
    host calls it at their instant, with every run due then at once, from a thread of the
    Swift cooperative pool (the one the runs of a Swift module resume on) while no other entry
    point of the handler can be called: block here and the runs, and the host's next call,
    wait. A token the module does not hold prepared (cancelled meanwhile) is ignored. Returns
    promptly. */
typedef void (*agent_task_start_fn)(void *handler, const uint64_t *run_tokens, size_t count);

/**
 * What `agent_module_entry` returns: static data owned by the module, valid for the life
 * of the process. The host never frees or writes it.
 */
typedef struct agent_module {
    /** Must equal the host's AGENT_MODULE_ABI_VERSION. Read first. */
    uint32_t abi_version;
    /** sizeof(agent_module) as the module compiled it. Read second. */
    uint32_t struct_size;

    /**
     * NUL-terminated UTF-8 JSON object:
     *   {"name": "sample", "version": "1.0.0",
     *    "processes": [{"type": "trade_feed", "kind": "datasource" | "monitor" | "logic_adapter",
     *                   "description": "...", "settings_schema": {JSON Schema 2020-12},
     *                   "subscribes": ["trade"]   (monitors: default event types, optional)
     *                  },
     *                  {"type": "word_count", "kind": "task",          (ABI 2: a task handler)
     *                   "description": "...", "settings_schema": {...},
     *                   "input_schema": {JSON Schema of a run's input},
     *                   "output_schema": {...}            (optional, documentation)
     *                   "heartbeat_timeout": 30           (optional, seconds: the watchdog)
     *                  }, ...]}
     */
    const char *manifest_json;

    agent_run_process_fn run_process;

    agent_adapter_create_fn adapter_create;
    agent_adapter_score_fn adapter_score;
    agent_adapter_respond_fn adapter_respond;
    agent_adapter_destroy_fn adapter_destroy;

    /* ABI 2: task handlers (NULL when the module has no `"kind": "task"` type). */
    agent_task_create_fn task_create;
    agent_task_run_fn task_run;
    agent_task_cancel_fn task_cancel;
    /* Appended in ABI 2: runs prepared ahead of their instant (optional). */
    agent_task_prepare_fn task_prepare;
    agent_task_start_fn task_start;
} agent_module;

/** The signature of the entry symbol. */
typedef const agent_module *(*agent_module_entry_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* AGENT_MODULE_H */
