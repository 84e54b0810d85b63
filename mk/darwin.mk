# mk/darwin.mk - the Darwin build: which sources it has (used by `make darwin-check` on
# Linux, end of the Makefile) and, on a Mac, the native build's sources, flags and
# libraries (Homebrew's hdf5, cmocka, gperftools; `make deps` prints or runs the brew
# line). Included by the Makefile after its Linux lists, before any rule. docs/darwin.md.

# Files are picked by suffix: *_darwin.c is Darwin-only, *_linux.c Linux-only. "mach" in a
# name is the portable suspend sampler (sampler/mach.c, mach_idle.c: both systems), not a
# platform; the Darwin-only Mach samplers say so with their suffix (mach_task_darwin.c).

# Linux-only sources: the mechanisms macOS lacks (timer_create, perf_event_open, ptrace,
# /proc and LD_PRELOAD for `exec`, which cmd_exec_darwin.c refuses with one line).
DARWIN_SKIP     := %_linux.c platform/linux.c sampler/ctimer.c sampler/perf.c sampler/ptrace.c \
                   sampler/broken.c sampler/fault_drop.c sampler/fault_stack.c \
                   harness/cmd_exec.c harness/exec_%.c
# In the Darwin build but compiled on a Mac only, not by darwin-check: they include HDF5,
# and Debian's H5pubconf.h is generated for glibc (it includes <features.h>) while the
# cross SDK has no HDF5 of its own; the JSON importers include cJSON, which it lacks too.
DARWIN_MAC_ONLY := $(wildcard results/h5io*.c) harness/cmd_gate.c harness/cmd_expect.c \
                   analysis/import_json.c analysis/import_speedscope.c analysis/import_firefox.c \
                   analysis/expect.c
# The sampler core: core/ (the sink, the run record), every sampler of the Darwin table,
# the registry, Mach thread control, the walker, the platform layer. darwin-check links it with tests/darwin/test_core.c.
DARWIN_CORE_SRCS := $(filter-out $(DARWIN_SKIP),$(wildcard core/*.c sampler/*.c)) platform/darwin.c
DARWIN_SRCS     := $(DARWIN_CORE_SRCS) \
                   $(filter-out $(DARWIN_MAC_ONLY) $(DARWIN_SKIP) harness/main.c, \
                     $(wildcard core/*.c workloads/*.c analysis/*.c results/*.c harness/*.c))
# Tests of Linux mechanisms (perf, ptrace, exec and its agent and plugins, the signal
# rendezvous under the mach sampler in test_mach.c, tgkill-driven workload checks, the gate
# on runs of ctimer and fault-drop, the Mach double that runs the Darwin sources on Linux,
# the integrity checks' thread CPU timer). tests/darwin/test_core.c covers Mach.
DARWIN_LINUX_TESTS := tests/test_perf.c tests/test_ptrace.c tests/test_exec.c \
                      tests/test_plugin.c tests/test_mach.c tests/test_workloads.c \
                      tests/test_mach_double.c tests/test_gate_faults.c tests/test_integrity.c

ifeq ($(shell uname -s),Darwin)
DARWIN_NATIVE := 1
BREW      := $(shell brew --prefix 2>/dev/null || echo /opt/homebrew)
LIB_SRCS  := $(DARWIN_SRCS) $(DARWIN_MAC_ONLY)
TEST_SRCS := $(filter-out $(DARWIN_LINUX_TESTS),$(wildcard tests/test_*.c)) tests/darwin/test_core.c
CFLAGS    += -I$(BREW)/include
# ld64 folds identical functions: the slot leaves must keep addresses of their own.
LDFLAGS   += -L$(BREW)/lib -Wl,-no_deduplicate
LDLIBS    := $(HDF5_LIBS) -lhdf5_hl -lz -lcjson -lm
WHOLE_LIB  = -Wl,-force_load,$(LIB)
MATRIX    := ci/matrix-darwin
endif
