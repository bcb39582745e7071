#include "agent_store_sqlite.h"

#include <sqlite3.h>

/* SQLite gives each connection's page cache an initial bulk of lines (its
   SQLITE_DEFAULT_PCACHE_INITSZ; 328 kB each here, from `mmap` at the connection's first read)
   and writes a header into every line of it, so that its pages are resident whether the
   connection ever caches that much or not. The store holds a writer, the WAL checkpointer's
   connection and a read-only one for each feature's store; measured on an idle agent, the
   supervisor's PSS was 0.65 MB smaller without the bulks. Lines are then allocated one at a
   time until the cache is full, and reused from there on.

   SQLite also keeps process-wide statistics of its memory (SQLITE_CONFIG_MEMSTATUS, on by
   default), which take a global mutex on every allocation and free: the store's writer paid
   about 0.04 µs an event for them (benchmarks/HISTORY.md, stop 76). Nothing here reads them
   (sqlite3_memory_used, sqlite3_status) or sets a soft heap limit, which needs them. */
int agent_store_configure_sqlite(void) {
    int code = sqlite3_config(SQLITE_CONFIG_PAGECACHE, (void *)0, 0, 0);
    if (code != SQLITE_OK) return code;
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
