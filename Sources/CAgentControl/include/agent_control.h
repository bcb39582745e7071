#ifndef AGENT_CONTROL_H
#define AGENT_CONTROL_H

/* agent-control links the Swift runtime statically; its crash backtracer would look for its
   helper relative to argv[0] (see backtrace_helper.c). Called first thing in main: gives the
   environment back as it was before the backtracer read it, so children never inherit what
   agent-control set for itself. */
void agent_control_restore_environment(void);

#endif
