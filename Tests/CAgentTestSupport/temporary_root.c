// The tests build programs and module libraries into temporary folders and run them; on a
// machine whose /tmp is mounted `noexec` (a common hardening, and one CI machine) every such
// exec and dlopen fails with EACCES. The folder is chosen here, in a constructor, because TMPDIR
// must be set before any thread exists: setenv beside another thread's getenv is unsafe, and
// every child (swift build's manifests, dpkg's scripts, the agents) inherits it.
#define _GNU_SOURCE
#include "agent_test_support.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static char chosen[PATH_MAX];
static char reason[PATH_MAX * 3];
static int found;

/// A folder that exists, that this process may write, and whose mount lets programs run.
static int runs_programs(const char *folder) {
    struct statvfs facts;
    if (statvfs(folder, &facts) != 0) return 0;
    if (facts.f_flag & ST_NOEXEC) return 0;
    return access(folder, W_OK | X_OK) == 0;
}

/// `agent-tests-tmp` beside this file's checkout (four folders above the file), outside the
/// source tree, where the tests never run an agent.
static void beside_checkout(char *out, size_t size) {
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s", __FILE__);
    for (int level = 0; level < 4; level++) {
        char *slash = strrchr(path, '/');
        if (!slash) { out[0] = 0; return; }
        *slash = 0;
    }
    snprintf(out, size, "%s/agent-tests-tmp", path[0] ? path : "/");
}

__attribute__((constructor)) static void agent_test_choose_temporary_root(void) {
    const char *system = getenv("TMPDIR");
    if (!system || !system[0]) system = "/tmp";
    if (runs_programs(system)) {
        snprintf(chosen, sizeof chosen, "%s", system);
        found = 1;
        return;
    }
    char beside[PATH_MAX];
    beside_checkout(beside, sizeof beside);
    const char *candidates[] = { "/var/tmp", beside };
    for (size_t index = 0; index < sizeof candidates / sizeof candidates[0]; index++) {
        const char *candidate = candidates[index];
        if (!candidate[0]) continue;
        if (candidate == beside && mkdir(candidate, 0755) != 0 && errno != EEXIST) continue;
        // Other users (the fleet tests' `postgres`) must reach what the tests make inside.
        if (candidate == beside) chmod(candidate, 01777);
        if (!runs_programs(candidate)) continue;
        snprintf(chosen, sizeof chosen, "%s", candidate);
        found = 1;
        snprintf(reason, sizeof reason,
                 "tests: programs may not run from %s (mounted noexec); temporary folders go to %s instead (TMPDIR)",
                 system, chosen);
        setenv("TMPDIR", chosen, 1);
        fprintf(stderr, "%s\n", reason);
        return;
    }
    snprintf(reason, sizeof reason,
             "tests: programs may not run from %s (mounted noexec), nor from /var/tmp or %s: the tests that build and run programs will fail; set TMPDIR to a folder that allows them",
             system, beside);
    fprintf(stderr, "%s\n", reason);
}

const char *agent_test_temporary_root(void) { return found ? chosen : NULL; }

const char *agent_test_temporary_root_reason(void) { return reason[0] ? reason : NULL; }
