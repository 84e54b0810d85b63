# sampbench - build out of tree into build/. Quiet by default; `make V=1` prints commands.
#   make            build build/sampbench
#   make check      unit + integration tests (SANITIZE=address,undefined and SANITIZE=thread
#                   pass too, each in its own BUILD=dir; .ci/run runs both)
#   make bench      the default benchmark matrix, results/runs/<UTC>.h5
#   make deps       install missing Debian packages (root) or print the command

BUILD    ?= build
SANITIZE ?=
CC       ?= cc
V        ?= 0

DEBS := libgoogle-perftools-dev libcmocka-dev libhdf5-dev hdf5-tools google-perftools golang-go \
        pkg-config zlib1g-dev libdw-dev libelf-dev libunwind-dev libcjson-dev \
        python3-h5py python3-numpy python3-matplotlib chromium xz-utils clang bpftrace npm \
        sysprof dbus-daemon dbus-bin polkitd

ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-7s %s\n' $(1) $(2)
endif

HDF5_CFLAGS := $(shell pkg-config --cflags hdf5 2>/dev/null || echo -I/usr/include/hdf5/serial)
HDF5_LIBS   := $(shell pkg-config --libs hdf5 2>/dev/null || echo -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5)
HDF5_LIBDIR := $(patsubst -L%,%,$(filter -L%,$(HDF5_LIBS)))

VERSION := 0.1.0
VERSION_H := $(BUILD)/gen/version.h

# Includes are written from the repository root ("core/run.h"): -I. everywhere.
CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
           -Wall -Wextra -Werror -pthread -I. $(HDF5_CFLAGS) -I$(BUILD)/gen
LDFLAGS += -pthread -rdynamic
LDLIBS  += $(HDF5_LIBS) -lhdf5_hl -ldw -lelf -lunwind -lz -lcjson -ldl -lrt -lm
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -O1
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# Darwin-only sources (*_darwin.c, platform/darwin.c) are the Darwin build's (mk/darwin.mk).
LIB_SRCS := $(filter-out %_darwin.c harness/main.c,$(wildcard core/*.c sampler/*.c workloads/*.c \
              results/*.c analysis/*.c harness/*.c)) platform/linux.c
MAIN_SRC := harness/main.c
TEST_SRCS := $(wildcard tests/test_*.c)
WHOLE_LIB = -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive
MATRIX := ci/matrix
include mk/darwin.mk

# Build variants (workloads/workload.h, docs/workloads.md "Variants"): these workloads are
# compiled again into objects of their own, without frame pointers (nofp) and with their
# measured functions inlined (inline); workloads/table.c lists each build. deep has no
# inline build: its recursion goes through a table of functions.
WL_VARIANTS_nofp   := deep hotspot alias burst kernel
WL_VARIANTS_inline := hotspot alias burst kernel
VARIANT_CFLAGS_nofp   := -fomit-frame-pointer -momit-leaf-frame-pointer -DWL_VARIANT_NOFP
VARIANT_CFLAGS_inline := -DWL_VARIANT_INLINE
VARIANT_OBJS := $(foreach v,nofp inline,$(WL_VARIANTS_$(v):%=$(BUILD)/workloads/%.$(v).o))

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o) $(VARIANT_OBJS)
MAIN_OBJ := $(MAIN_SRC:%.c=$(BUILD)/%.o)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
FUZZ_DIR := $(BUILD)/tests/fuzz
REPLAY_BINS := $(addprefix $(FUZZ_DIR)/replay_,cpuprofile h5 import)
LIB := $(BUILD)/libsampbench.a
BIN := $(BUILD)/sampbench

.PHONY: all deps check unit integration bench clean FORCE fuzz
.DEFAULT_GOAL := all

all: deps $(BIN)

deps:
	@sh ci/deps.sh $(DEBS)

# Rewritten only when the revision, version or compiler changes, so a commit rebuilds the two
# files that print it and nothing else.
$(VERSION_H): FORCE
	@mkdir -p $(@D)
	@{ printf '#define SB_VERSION "%s"\n' '$(VERSION)'; \
	   printf '#define SB_GIT_REV "%s%s"\n' "$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
	          "$$(git diff --quiet HEAD -- . 2>/dev/null || echo -dirty)"; \
	   printf '#define SB_CC "%s"\n' "$$($(CC) --version | head -1)"; \
	   printf '#define SB_BUILD "%s"\n' '$(if $(SANITIZE),sanitize=$(SANITIZE),plain)'; } > $@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

$(LIB_OBJS) $(MAIN_OBJ): | $(VERSION_H)

# Nothing compiles before the packages it includes are installed (make -j on a new machine).
$(BUILD)/%.o: %.c | deps
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# The flags come last, so -fomit-frame-pointer overrides CFLAGS' -fno-omit-frame-pointer.
define variant_rule
$(BUILD)/workloads/%.$(1).o: workloads/%.c | deps $(VERSION_H)
	$$(call msg,CC,$$@)
	@mkdir -p $$(@D)
	$$(Q)$$(CC) $$(CFLAGS) $$(VARIANT_CFLAGS_$(1)) -MMD -MP -c $$< -o $$@
endef
$(foreach v,nofp inline,$(eval $(call variant_rule,$(v))))

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) $(WHOLE_LIB) $(LDLIBS)

# What every test program links besides the library: running the binary, held runs, runs
# compared value by value, Go's pprof reader.
TEST_SUPPORT := $(BUILD)/tests/support/sbrun.o $(BUILD)/tests/support/live_run.o \
                $(BUILD)/tests/support/runcmp.o $(BUILD)/tests/support/runfile.o \
                $(BUILD)/tests/support/go_pprof.o

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_SUPPORT) $(LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(TEST_SUPPORT) $(WHOLE_LIB) $(LDLIBS) -lcmocka

# test_h5 counts the reader's own opens of a results file (a damaged schema 1 file is
# opened only by the trial read's child): GNU ld's --wrap, which ld64 lacks.
ifeq ($(DARWIN_NATIVE),)
$(BUILD)/tests/test_h5: LDFLAGS += -Wl,--wrap=open_h5
endif

# The Darwin backend on Linux (docs/darwin.md "The Mach double"): the Darwin sources,
# unchanged, built against tests/machdouble's Mach declarations and linked with the double
# instead of Linux's thread control and registry. Never part of the product.
MACHDOUBLE_SRCS   := sampler/thread_ctl_darwin.c sampler/mach_task_darwin.c \
                     sampler/thread_state_darwin.c
MACHDOUBLE_CFLAGS := -Itests/machdouble/include -Iplatform/darwin/include
MACHDOUBLE_OBJS   := $(MACHDOUBLE_SRCS:%.c=$(BUILD)/machdouble/%.o) \
                     $(BUILD)/machdouble/tests/machdouble/mach_double.o
MACHDOUBLE_LIB    := $(filter-out $(BUILD)/sampler/thread_ctl_linux.o \
                       $(BUILD)/sampler/registry_linux.o,$(LIB_OBJS))
# _exit: the double flushes gcov's counters in forked sampler processes (coverage-darwin);
# plat_stack_bounds_self: the double's "unknown stack bounds" threads.
MACHDOUBLE_LD     := -Wl,--wrap=_exit -Wl,--wrap=plat_stack_bounds_self

$(BUILD)/machdouble/%.o: %.c | deps $(VERSION_H)
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(MACHDOUBLE_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tests/test_mach_double.o: CFLAGS += $(MACHDOUBLE_CFLAGS)
$(BUILD)/tests/test_mach_double: $(BUILD)/tests/test_mach_double.o $(TEST_SUPPORT) \
                                 $(MACHDOUBLE_OBJS) $(MACHDOUBLE_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(MACHDOUBLE_LD) -o $@ $^ $(LDLIBS) -lcmocka

# tests/darwin/test_core.c, the Mac's own test of the sampler core, on the double: the
# Darwin sampler table in place of Linux's. Run by `make check` (not on a Mac, which runs
# the real one).
MACHDOUBLE_CORE := $(if $(DARWIN_NATIVE),,$(BUILD)/tests/darwin/test_core_double)
$(BUILD)/tests/darwin/test_core_double: $(BUILD)/machdouble/tests/darwin/test_core.o \
    $(BUILD)/machdouble/sampler/table_darwin.o $(MACHDOUBLE_OBJS) \
    $(filter-out $(BUILD)/sampler/table_linux.o,$(MACHDOUBLE_LIB))
	$(call msg,LD,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) $(MACHDOUBLE_LD) -o $@ $^ $(LDLIBS)

# Line coverage (gcov) of the Darwin sources under test_mach_double: the same test linked
# with an instrumented copy of them; fails below 85 % for thread_ctl_darwin.c or
# mach_task_darwin.c.
.PHONY: coverage-darwin
MACHDOUBLE_COV := $(BUILD)/machdouble-cov
$(MACHDOUBLE_COV)/%.o: %.c | deps $(VERSION_H)
	$(call msg,CC-COV,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $(MACHDOUBLE_CFLAGS) -O0 --coverage -c $< -o $@

$(BUILD)/tests/test_mach_double-cov: $(BUILD)/tests/test_mach_double.o $(TEST_SUPPORT) \
    $(MACHDOUBLE_SRCS:%.c=$(MACHDOUBLE_COV)/%.o) $(BUILD)/machdouble/tests/machdouble/mach_double.o \
    $(MACHDOUBLE_LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) $(MACHDOUBLE_LD) --coverage -Wl,--undefined=__gcov_dump -o $@ $^ $(LDLIBS) -lcmocka

coverage-darwin: deps $(BIN) $(BUILD)/tests/test_mach_double-cov
	$(Q)BUILD=$(BUILD) sh tests/machdouble/coverage.sh $(MACHDOUBLE_COV) $(BUILD)/tests/test_mach_double-cov \
	  85 $(MACHDOUBLE_SRCS)

# mach's and mach-idle's cost per tick, 1..64 busy and 0..10,000 idle threads, against
# this host's floors (docs/mach.md).
SCALING := $(BUILD)/mach_scaling
$(SCALING): $(BUILD)/tools/mach_scaling.o $(LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(WHOLE_LIB) $(LDLIBS)

# Tests whose assertions hold on a loaded CPU (no timing, no sampler judged on its rates)
# run three at a time on the 2 CPUs, longest first (test_report ~40 s in the lane, the
# defects caught by counts ~13 s, the browser ~13 s); every other test, new ones included,
# runs alone (the timed defects: ~33 s). The README's example session (tests/readme.sh,
# ~35 s of both CPUs) is `make check-readme`, in .ci/run. The timed parts of platform, gate and bench_driver are
# programs of their own, run alone: test_platform_timing, test_gate_faults,
# test_bench_resume; test_mach_double runs in two parts, its rate comparisons alone
# (tests/machdouble/rates.sh, semantics.sh).
CHECK_PARALLEL := $(BUILD)/tests/test_report tests/gate_defects_untimed.sh tests/report_browser.sh \
                  $(if $(DARWIN_NATIVE),,tests/machdouble/semantics.sh) \
                  $(addprefix $(BUILD)/tests/test_,bench_driver h5 cli export import cpuprofile opt \
                  registry matrix metrics iso_time atomic_file fpwalk gate platform child \
                  calibrate expect) \
                  tests/layers.sh tests/fixtures/check.sh tests/fuzz/replay.sh tests/findings.sh \
                  tests/action.sh tests/paths.sh
CHECK_SERIAL := $(filter-out $(CHECK_PARALLEL) $(BUILD)/tests/test_mach_double,$(TEST_BINS)) \
                $(MACHDOUBLE_CORE) $(if $(DARWIN_NATIVE),,tests/machdouble/rates.sh) tests/gate_defects_timed.sh \
                $(if $(DARWIN_NATIVE),,tests/expect.sh)

# The build before the tests takes one job per CPU unless the command line chose -j (built
# one file at a time, it was a fifth of make check on 2 cores).
NPROC := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
.PHONY: check-build
check-build: $(BIN) $(TEST_BINS) $(MACHDOUBLE_CORE) $(REPLAY_BINS)
check: deps
	@$(MAKE) --no-print-directory $(if $(findstring -j,$(MAKEFLAGS)),,-j$(NPROC)) check-build
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) sh tests/run.sh -j 3 $(CHECK_PARALLEL) -- $(CHECK_SERIAL)

# The README's example commands run as written (tests/readme.sh): in .ci/run after make check.
.PHONY: check-readme
check-readme: deps $(BIN)
	@BUILD=$(BUILD) sh tests/readme.sh

# The quick profile of ci/matrix judged by ci/budgets (docs/gate.md): a benchmark, not a
# unit test, so not in make check; .ci/run runs it after make check. A cell failing the
# gate is measured once more and judged again (ci/gate-confirm.sh, docs/gate.md
# "Confirmation in CI"). A sampler of the profile skipped here fails it: on Linux every
# one must run.
.PHONY: gate-quick
gate-quick: deps $(BIN)
	@echo "== quick bench profile, budget gate (ci/matrix, ci/budgets; docs/gate.md)"
	$(Q)$(BIN) bench --matrix $(MATRIX) --profile quick --force -o $(BUILD)/quick.h5; rc=$$?; \
	[ $$rc -le 1 ] || exit $$rc; \
	sh ci/gate-confirm.sh $(BIN) $(MATRIX) quick $(BUILD)/quick.h5 || exit 1; \
	skipped=$$($(BIN) show $(BUILD)/quick.h5 | awk '$$7 == "skipped" { print $$2 }' | sort -u); \
	[ -z "$$skipped" ] || { echo "quick gate: skipped here, where the quick profile's samplers must run:" $$skipped; exit 1; }

# The workloads profile of ci/matrix (every healthy built-in on every shipped workload, 3 to
# 5 x 1 s a cell, about 7 min on 2 cores) judged by ci/budgets: no false alarm on any
# workload.
# A benchmark like gate-quick, with its confirmation; .ci/run runs it after gate-quick.
.PHONY: gate-workloads
gate-workloads: deps $(BIN)
	@echo "== workloads bench profile, budget gate (ci/matrix, ci/budgets; docs/gate.md)"
	$(Q)$(BIN) bench --matrix $(MATRIX) --profile workloads --force -o $(BUILD)/workloads.h5; rc=$$?; \
	[ $$rc -le 1 ] || exit $$rc; \
	sh ci/gate-confirm.sh $(BIN) $(MATRIX) workloads $(BUILD)/workloads.h5 || exit 1; \
	skipped=$$($(BIN) show $(BUILD)/workloads.h5 | awk '$$7 == "skipped" { print $$2 }' | sort -u); \
	[ -z "$$skipped" ] || { echo "workloads gate: skipped here, where the profile's samplers must run:" $$skipped; exit 1; }

# libFuzzer runs of the cpu profile parser, the results reader and the importers (~30 s
# each, one per CPU at a time, built with clang, which make deps installs; fails without
# it); .ci/run runs this.
# make check replays their corpora through the same targets, built by the rules below.
fuzz: deps
	@BUILD=$(BUILD) sh tests/fuzz/run.sh

# The fuzz targets without libFuzzer (tests/fuzz/replay.c), linked with only what each
# reaches, as tests/fuzz/run.sh links them, and built with this build's sanitizers:
# tests/fuzz/replay.sh runs every corpus file through them in make check.
$(FUZZ_DIR)/replay_cpuprofile: $(FUZZ_DIR)/fuzz_cpuprofile.o $(FUZZ_DIR)/replay.o \
                               $(BUILD)/sampler/cpuprofile.o
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lm
$(FUZZ_DIR)/replay_h5: $(FUZZ_DIR)/fuzz_h5.o $(FUZZ_DIR)/replay.o \
                       $(filter $(BUILD)/results/h5io_%.o,$(LIB_OBJS)) \
                       $(addprefix $(BUILD)/core/,run.o metrics.o iso_time.o)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(HDF5_LIBS) -lm
$(FUZZ_DIR)/replay_import: $(FUZZ_DIR)/fuzz_import.o $(FUZZ_DIR)/replay.o \
                           $(filter $(BUILD)/analysis/import%.o,$(LIB_OBJS)) \
                           $(BUILD)/analysis/protobuf.o $(BUILD)/sampler/cpuprofile.o \
                           $(addprefix $(BUILD)/core/,run.o metrics.o)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lz -lcjson -lm

# Profile $(PROFILE) of ci/matrix into results/runs/<UTC>.h5 (its adaptive repetitions
# decided against the baseline too), then the gate against this
# machine's baseline, results/baselines/<fingerprint>.h5 (budgets only without one):
# failed and warned checks on screen, every check in <UTC>.gate.txt/.json/.junit.xml;
# exits 1 on a regression. docs/bench.md.
# AB=REV: same-run A/B, REV's build (B) against this checkout's (A) in one file, gated B
# vs A. SHARD=K/N: part K of N (results/runs/<UTC>-shardKofN.h5). RESUME=FILE.h5.tmp:
# continue a killed bench.
# PROFILE=full also writes <UTC>.scaling.txt: mach's and mach-idle's cost per tick as threads
# are added (1..64 busy, 0..10,000 idle)
# against this host's floors (tools/mach_scaling.c).
PROFILE ?= default
bench: deps $(BIN) $(if $(filter full,$(PROFILE)),$(SCALING))
	$(Q)mkdir -p results/runs; run=results/runs/$$(date -u +%Y%m%dT%H%M%SZ)$(if $(SHARD),-shard$(subst /,of,$(SHARD))); \
	$(if $(filter full,$(PROFILE)),$(SCALING) >$$run.scaling.txt || exit 2;) \
	$(if $(RESUME),run=$(patsubst %.h5.tmp,%,$(RESUME));) \
	base=$$($(BIN) baseline --path) || exit 2; bb=; \
	[ -n "$(AB)" ] || [ ! -f "$$base" ] || bb="--baseline $$base"; \
	$(BIN) bench --matrix $(MATRIX) $(if $(RESUME),--resume $(RESUME) $(if $(filter command line,$(origin PROFILE)),--profile $(PROFILE)),--profile $(PROFILE) -o $$run.h5) \
	  $(if $(AB),--ab $(AB)) $(if $(SHARD),--shard $(SHARD)) $$bb; rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	gb=; \
	if [ -n "$(AB)" ]; then echo "A/B: the gate compares B ($(AB)) with A (this checkout) inside $$run.h5"; \
	elif [ -f "$$base" ]; then gb="--baseline $$base"; \
	else echo "no baseline for this machine ($$base): budgets only ('make baseline' makes one of $$run.h5)"; fi; \
	$(BIN) gate $$gb --json $$run.gate.json --junit $$run.junit.xml $$run.h5 >$$run.gate.txt; \
	rc=$$?; grep -v '^✓' $$run.gate.txt; echo "every check: $$run.gate.txt"; exit $$rc

# FILE (default: the newest results/runs/*.h5) becomes this machine's baseline,
# results/baselines/<fingerprint>.h5 (the previous one kept as .prev.h5).
.PHONY: baseline
baseline: deps $(BIN)
	$(Q)f="$(FILE)"; [ -n "$$f" ] || f=$$(ls -t results/runs/*.h5 2>/dev/null | head -1); \
	if [ -z "$$f" ]; then echo "sampbench: no results/runs/*.h5 (run make bench)" >&2; exit 2; fi; \
	base=$$($(BIN) baseline --path) || exit 2; $(BIN) baseline --to "$$base" "$$f"

# The newest results/runs/*.h5 as results/report/index.html + images (docs/report.md), its
# History section the suspend window per commit over all of them (history.svg beside it).
.PHONY: report
report: deps $(BIN)
	$(Q)f=$$(ls -t results/runs/*.h5 2>/dev/null | head -1); \
	if [ -z "$$f" ]; then echo "sampbench: no results/runs/*.h5 (run make bench)" >&2; exit 2; fi; \
	$(BIN) report "$$f" -o results/report --history results/runs/*.h5

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

# --- exec (docs/exec.md): the LD_PRELOAD agent, the example plugin, test programs ---
# Never sanitized: an ASan-built .so cannot be preloaded into a program built without it,
# and the plugin is loaded into such programs by the agent too.
AGENT      := $(BUILD)/libsampbench-agent.so
# The whole sampler table (sampler/table_linux.c): the agent carries the entries flagged
# SB_SAMPLER_IN_PROCESS, so a new in-process sampler needs no line here.
AGENT_SRCS := agent/agent.c $(filter-out %_darwin.c,$(wildcard sampler/*.c)) \
              core/sink.c platform/linux.c
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/agent-pic/%.o)
EXAMPLES   := $(BUILD)/examples/ctimer_plugin.so $(BUILD)/examples/expect/split \
              $(BUILD)/examples/expect/named
TEST_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(wildcard tests/progs/*.c)) \
              $(patsubst tests/plugins/%.c,$(BUILD)/tests/plugins/%.so,$(wildcard tests/plugins/*.c))
PIC_CFLAGS := -O2 -g -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer \
              -mno-omit-leaf-frame-pointer -Wall -Wextra -Werror -pthread -fPIC -I.

all: $(if $(DARWIN_NATIVE),,$(AGENT) $(EXAMPLES) $(TEST_PROGS))
check-build: $(if $(DARWIN_NATIVE),,$(AGENT) $(EXAMPLES) $(TEST_PROGS))
# Every README example works after either of the two commands: exec needs the agent.
bench: $(if $(DARWIN_NATIVE),,$(AGENT) $(EXAMPLES))
check-readme: $(if $(DARWIN_NATIVE),,$(AGENT) $(EXAMPLES))

# The agent's own pthread_create wraps the registry's: rename the registry's definition.
$(BUILD)/agent-pic/sampler/registry_linux.o: AGENT_DEFS := -Dpthread_create=sb_reg_pthread_create

$(BUILD)/agent-pic/%.o: %.c | deps
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -fvisibility=hidden $(AGENT_DEFS) -MMD -MP -c $< -o $@

$(AGENT): $(AGENT_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -pthread -Wl,-z,defs -o $@ $^ -lunwind -ldl -lrt -lm

$(BUILD)/examples/%.so: examples/%.c sampler/sampbench_sampler.h
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -shared -Isampler -Wl,-z,defs -o $@ $< -lrt

# The expectation examples' programs (docs/expect.md): frame pointers, no PIC needed.
$(BUILD)/examples/expect/%: examples/expect/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) -O2 -g -fno-omit-frame-pointer -Wall -Wextra -Werror -pthread -o $@ $<

$(BUILD)/tests/plugins/%.so: tests/plugins/%.c sampler/sampbench_sampler.h $(wildcard tests/plugins/*.h)
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -shared -Isampler -o $@ $<

$(BUILD)/tests/progs/%: tests/progs/%.c tests/progs/burn.h
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -o $@ $< -lm

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

.SECONDARY:

# --- darwin-check (docs/darwin.md): the macOS build, cross-compiled and linked here ---
# zig's clang with its bundled macOS SDK headers and libSystem stubs, installed by npm into
# a cache outside the tree. Compiles every source of the Darwin build for both macOS
# targets with -Werror and links the sampler core's test (tests/darwin/test_core.c) into a
# Mach-O executable. Nothing here runs Darwin code: that is the macos-14 CI job.
ZIG_VERSION    := 0.11.0
ZIG_CACHE      ?= $(HOME)/.cache/sampbench/zig
DARWIN_TARGETS := aarch64-macos x86_64-macos
DARWIN_BUILD   := $(BUILD)/darwin
# The sources (DARWIN_SRCS, DARWIN_CORE_SRCS) are listed in mk/darwin.mk.
DARWIN_CHECK_SRCS := $(DARWIN_SRCS) $(MAIN_SRC)
DARWIN_CFLAGS  := -std=gnu11 -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
                  -Wall -Wextra -Werror -pthread -I. -Iplatform/darwin/include \
                  -I$(DARWIN_BUILD)/inc -I$(BUILD)/gen
DARWIN_TESTS   := $(foreach t,$(DARWIN_TARGETS),$(DARWIN_BUILD)/$(t)/test_core)

.PHONY: darwin-check
darwin-check: deps $(DARWIN_TESTS)
	$(Q)for t in $(DARWIN_TESTS); do \
	  kind=$$(file -b $$t 2>/dev/null || od -An -tx1 -N4 $$t); \
	  case "$$kind" in *Mach-O*|*"cf fa ed fe"*) ;; *) echo "sampbench: $$t is not Mach-O: $$kind" >&2; exit 1;; esac; \
	  echo "  DARWIN  $$t: $$kind"; done
	@echo "darwin-check: $(words $(DARWIN_CHECK_SRCS)) sources and $(words $(VARIANT_OBJS)) workload variants x $(words $(DARWIN_TARGETS)) targets compiled with -Werror, core test linked (not run: no Mac here)"

# The compiler path, installed on first use (ci/darwin-toolchain.sh: one line on failure).
$(DARWIN_BUILD)/zig: FORCE
	@mkdir -p $(@D)
	$(Q)z=$$(sh ci/darwin-toolchain.sh $(ZIG_VERSION) $(ZIG_CACHE)) || exit 1; \
	echo "$$z" > $@.tmp; cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# gperftools' profiler.h is portable C declarations (sampler/gperftools.c takes struct
# layouts from it and dlopens libprofiler): Debian's copy stands in for Homebrew's.
$(DARWIN_BUILD)/inc/gperftools/profiler.h: /usr/include/gperftools/profiler.h
	@mkdir -p $(@D)
	$(Q)cp $< $@

# The workloads' build variants too (VARIANT_OBJS), each with its variant's flags.
define darwin_target
$(DARWIN_BUILD)/$(1)/%.o: %.c $(DARWIN_BUILD)/zig $(DARWIN_BUILD)/inc/gperftools/profiler.h | $(VERSION_H)
	$$(call msg,CC-MAC,$(1)/$$<)
	@mkdir -p $$(@D)
	$$(Q)"$$$$(cat $(DARWIN_BUILD)/zig)" cc -target $(1) $$(DARWIN_CFLAGS) -MMD -MP -c $$< -o $$@

$(DARWIN_BUILD)/$(1)/workloads/%.nofp.o: workloads/%.c $(DARWIN_BUILD)/zig | $(VERSION_H)
	$$(call msg,CC-MAC,$$@)
	@mkdir -p $$(@D)
	$$(Q)"$$$$(cat $(DARWIN_BUILD)/zig)" cc -target $(1) $$(DARWIN_CFLAGS) $$(VARIANT_CFLAGS_nofp) -MMD -MP -c $$< -o $$@

$(DARWIN_BUILD)/$(1)/workloads/%.inline.o: workloads/%.c $(DARWIN_BUILD)/zig | $(VERSION_H)
	$$(call msg,CC-MAC,$$@)
	@mkdir -p $$(@D)
	$$(Q)"$$$$(cat $(DARWIN_BUILD)/zig)" cc -target $(1) $$(DARWIN_CFLAGS) $$(VARIANT_CFLAGS_inline) -MMD -MP -c $$< -o $$@

$(DARWIN_BUILD)/$(1)/test_core: $(DARWIN_CHECK_SRCS:%.c=$(DARWIN_BUILD)/$(1)/%.o) $(VARIANT_OBJS:$(BUILD)/%=$(DARWIN_BUILD)/$(1)/%) $(DARWIN_BUILD)/$(1)/tests/darwin/test_core.o
	$$(call msg,LD-MAC,$$@)
	$$(Q)"$$$$(cat $(DARWIN_BUILD)/zig)" cc -target $(1) -pthread -o $$@ \
	  $(DARWIN_CORE_SRCS:%.c=$(DARWIN_BUILD)/$(1)/%.o) $(DARWIN_BUILD)/$(1)/tests/darwin/test_core.o
endef
$(foreach t,$(DARWIN_TARGETS),$(eval $(call darwin_target,$(t))))
