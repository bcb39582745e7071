/* The ABI is a header only; this file exists because a C target needs a source. */
#include "agent_module.h"
