/* symbolize_linux.h - the libdw half of the Linux symbolizer, for callers that build their
 * own Dwfl (exec: another process's saved /proc/PID/maps). */
#ifndef SB_SYMBOLIZE_LINUX_H
#define SB_SYMBOLIZE_LINUX_H

#include <elfutils/libdwfl.h>

#include "analysis/symbolize.h"

/* Fills out for user-space pc from dwfl (NULL: nothing known): module base name, function
 * and offset, or "?" and the hex pc when unknown. Returns 1 when the function was found,
 * else 0. */
int symbolize_dwfl(Dwfl *dwfl, uint64_t pc, struct sb_symbol *out);

/* The inline chain of user-space pc from dwfl's DWARF (see symbolize_inlines): up to max
 * frames into out, innermost first. Returns how many (0 without DWARF or outside inlined
 * code). */
int symbolize_dwfl_inlines(Dwfl *dwfl, uint64_t pc, struct sb_inline_frame *out, int max);

#endif
