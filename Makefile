# sampbench - build out of tree into build/. Quiet by default; `make V=1` prints commands.
#   make            build build/sampbench
#   make check      unit + integration tests (SANITIZE=address,undefined or thread works)
#   make bench      the default benchmark matrix, results/runs/<UTC>.h5
#   make deps       install missing Debian packages (root) or print the command

BUILD    ?= build
SANITIZE ?=
CC       ?= cc
V        ?= 0

DEBS := libgoogle-perftools-dev libcmocka-dev libhdf5-dev hdf5-tools google-perftools \
        pkg-config zlib1g-dev libdw-dev libelf-dev \
        python3-h5py python3-numpy python3-matplotlib

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

CFLAGS  ?= -O2 -g
CFLAGS  += -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
           -Wall -Wextra -Werror -pthread $(HDF5_CFLAGS) -I$(BUILD)/gen
LDFLAGS += -pthread -rdynamic
LDLIBS  += $(HDF5_LIBS) -lhdf5_hl -ldw -lelf -lz -ldl -lrt -lm
ifneq ($(SANITIZE),)
CFLAGS  += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -O1
LDFLAGS += -fsanitize=$(SANITIZE)
endif

# Darwin-only sources never build here.
LIB_SRCS := $(filter-out %_mach.c,$(wildcard sampler/*.c workloads/*.c results/*.c analysis/*.c)) \
            $(filter-out harness/main.c,$(wildcard harness/*.c))
MAIN_SRC := harness/main.c
TEST_SRCS := $(wildcard tests/test_*.c)

LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
MAIN_OBJ := $(MAIN_SRC:%.c=$(BUILD)/%.o)
TEST_BINS := $(TEST_SRCS:tests/%.c=$(BUILD)/tests/%)
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

$(BUILD)/%.o: %.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(LIB): $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(BIN): $(MAIN_OBJ) $(LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(MAIN_OBJ) -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(LIB)
	$(call msg,LD,$@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -Wl,--whole-archive $(LIB) -Wl,--no-whole-archive $(LDLIBS) -lcmocka

check: deps $(BIN) $(TEST_BINS)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) FUZZ_SECONDS=20 sh tests/run.sh $(TEST_BINS) tests/fuzz/run.sh tests/gate_defects.sh
ifneq ($(GATE_QUICK),0)
	@echo "== quick bench profile, budget gate (ci/matrix, ci/budgets; docs/gate.md; GATE_QUICK=0 skips)"
	$(Q)$(BIN) bench --profile quick --force -o $(BUILD)/quick.h5; rc=$$?; \
	[ $$rc -le 1 ] || exit $$rc; $(BIN) gate -q $(BUILD)/quick.h5
endif

# libFuzzer run of the cpu profile parser (~30 s; skips without clang)
fuzz:
	@BUILD=$(BUILD) sh tests/fuzz/run.sh

# Profile $(PROFILE) of ci/matrix into results/runs/<UTC>.h5, then the gate against this
# machine's baseline, results/baselines/<fingerprint>.h5 (budgets only without one):
# failed and warned checks on screen, every check in <UTC>.gate.txt/.json/.junit.xml;
# exits 1 on a regression. docs/bench.md.
# AB=REV: same-run A/B, REV's build (B) against this checkout's (A) in one file, gated B
# vs A. SHARD=K/N: part K of N (results/runs/<UTC>-shardKofN.h5). RESUME=FILE.h5.tmp:
# continue a killed bench.
PROFILE ?= default
bench: deps $(BIN)
	$(Q)mkdir -p results/runs; run=results/runs/$$(date -u +%Y%m%dT%H%M%SZ)$(if $(SHARD),-shard$(subst /,of,$(SHARD))); \
	$(if $(RESUME),run=$(patsubst %.h5.tmp,%,$(RESUME));) \
	$(BIN) bench $(if $(RESUME),--resume $(RESUME) $(if $(filter command line,$(origin PROFILE)),--profile $(PROFILE)),--profile $(PROFILE) -o $$run.h5) \
	  $(if $(AB),--ab $(AB)) $(if $(SHARD),--shard $(SHARD)); rc=$$?; [ $$rc -le 1 ] || exit $$rc; \
	base=$$($(BIN) baseline --path) || exit 2; gb=; \
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

# The newest results/runs/*.h5 as results/report/index.html + images (docs/report.md), and
# the suspend window per commit over all of them (history.txt, history.svg).
.PHONY: report
report: deps $(BIN)
	$(Q)f=$$(ls -t results/runs/*.h5 2>/dev/null | head -1); \
	if [ -z "$$f" ]; then echo "sampbench: no results/runs/*.h5 (run make bench)" >&2; exit 2; fi; \
	$(BIN) report "$$f" -o results/report && \
	$(BIN) history --plot results/report/history.svg results/runs/*.h5 >results/report/history.txt && \
	echo "history of every results/runs/*.h5: results/report/history.txt, history.svg (docs/bench.md)"

clean:
	$(call msg,CLEAN,$(BUILD))
	$(Q)rm -rf $(BUILD)

# --- exec (docs/exec.md): the LD_PRELOAD agent, the example plugin, test programs ---
# Never sanitized: an ASan-built .so cannot be preloaded into a program built without it,
# and the plugin is loaded into such programs by the agent too.
AGENT      := $(BUILD)/libsampbench-agent.so
AGENT_SRCS := agent/agent.c harness/plugin.c \
              $(addprefix sampler/,itimer.c ctimer.c sigsample.c mach.c registry.c \
                thread_ctl_linux.c fpwalk.c sink.c threads.c gperftools.c cpuprofile.c)
AGENT_OBJS := $(AGENT_SRCS:%.c=$(BUILD)/agent-pic/%.o)
EXAMPLES   := $(BUILD)/examples/ctimer_plugin.so
TEST_PROGS := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(wildcard tests/progs/*.c)) \
              $(patsubst tests/plugins/%.c,$(BUILD)/tests/plugins/%.so,$(wildcard tests/plugins/*.c))
PIC_CFLAGS := -O2 -g -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer \
              -mno-omit-leaf-frame-pointer -Wall -Wextra -Werror -pthread -fPIC

all: $(AGENT) $(EXAMPLES) $(TEST_PROGS)
check: $(AGENT) $(EXAMPLES) $(TEST_PROGS)

# The agent's own pthread_create wraps the registry's: rename the registry's definition.
$(BUILD)/agent-pic/sampler/registry.o: AGENT_DEFS := -Dpthread_create=sb_reg_pthread_create

$(BUILD)/agent-pic/%.o: %.c
	$(call msg,CC,$@)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -fvisibility=hidden $(AGENT_DEFS) -MMD -MP -c $< -o $@

$(AGENT): $(AGENT_OBJS)
	$(call msg,LD,$@)
	$(Q)$(CC) -shared -pthread -Wl,-z,defs -o $@ $^ -ldl -lrt -lm

$(BUILD)/examples/%.so: examples/%.c sampler/sampbench_sampler.h
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -shared -Isampler -Wl,-z,defs -o $@ $< -lrt

$(BUILD)/tests/plugins/%.so: tests/plugins/%.c sampler/sampbench_sampler.h
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -shared -Isampler -o $@ $<

$(BUILD)/tests/progs/%: tests/progs/%.c
	$(call msg,CC,$<)
	@mkdir -p $(@D)
	$(Q)$(CC) $(PIC_CFLAGS) -o $@ $< -lm

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

.SECONDARY:
