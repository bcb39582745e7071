#ifndef AGENT_TEST_SUPPORT_H
#define AGENT_TEST_SUPPORT_H

/// The folder the test process's temporary folders go in (its TMPDIR), chosen before any test
/// runs: the system's, unless programs may not run from it (a `noexec` mount), then the first
/// of /var/tmp and a folder beside the checkout that allows them. NULL when none does.
const char *agent_test_temporary_root(void);

/// Why the root is not the system's temporary folder (a line to print), or NULL.
const char *agent_test_temporary_root_reason(void);

#endif
