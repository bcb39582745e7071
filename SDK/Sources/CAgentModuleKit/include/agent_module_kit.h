/* What AgentModuleKit needs from the C library that Swift's Glibc module does not import. */
#ifndef AGENT_MODULE_KIT_H
#define AGENT_MODULE_KIT_H

/**
 * Gives back the calling thread's stack pages below its current depth, less a 4 kB margin
 * (MADV_DONTNEED): for a thread that went deep once and now waits near the top. Returns the
 * bytes of the range given back (0 when there is none), or -1 with errno. Linux only: elsewhere
 * it does nothing and returns 0.
 */
long agent_module_kit_trim_stack(void);

/**
 * Reads where the main thread's stack mapping starts, when called on the main thread, for
 * agent_module_kit_trim_stack in this process and in every process forked from its main thread
 * (a fork server's workers), which then read it again only if the mapping has grown below it.
 */
void agent_module_kit_note_main_stack(void);

/**
 * Forgets what agent_module_kit_note_main_stack read (any thread): after a module's load, whose
 * constructor may have changed the mappings at the stack's bottom. The next trim reads it again.
 */
void agent_module_kit_forget_main_stack(void);

#endif
