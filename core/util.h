/* util.h - small macros every layer may use (header only: the agent and plugins link no
 * core objects). */
#ifndef SB_CORE_UTIL_H
#define SB_CORE_UTIL_H

/* Number of elements of a true array (not a pointer: sizeof would lie). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
