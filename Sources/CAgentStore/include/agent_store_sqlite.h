/* What AgentStore sets in SQLite that Swift cannot call (sqlite3_config is variadic). */
#ifndef AGENT_STORE_SQLITE_H
#define AGENT_STORE_SQLITE_H

/**
 * Turns off the page cache's initial bulk allocation of every connection (sqlite3_config
 * SQLITE_CONFIG_PAGECACHE with no memory and 0 lines): each page is allocated when it is
 * first cached; and turns off SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS 0), whose
 * global mutex every allocation takes. Before SQLite's initialisation only: returns SQLITE_OK,
 * or SQLITE_MISUSE once a connection has been opened in the process (the defaults then hold).
 */
int agent_store_configure_sqlite(void);

#endif
