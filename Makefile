# userperf: `make run` builds and runs the demo, `make test` builds and runs every test.
# Each target first installs missing Debian packages (scripts/install-deps.sh, idempotent).
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: deps build test test-main test-asan test-tsan run bench fuzz format clean

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main build runs every test; an ASan+UBSan build runs the concurrency tests and the unit tests
# of the modules that handle raw memory and outside bytes, a TSan build the concurrency tests. Each prints ctest's summary; the last line sums the three.
test: deps
	@bash scripts/run-tests.sh

# The demo: record examples/hotspots.c (a plain program, 50/30/20 CPU in three functions) with
# callchains, unprivileged-style (no perf_event_open), then show the profile and write its flame
# graph page.
run: build
	@$(BUILD)/bin/userperf record -g -o $(BUILD)/hotspots.data -- $(BUILD)/bin/hotspots 2
	@$(BUILD)/bin/userperf report -i $(BUILD)/hotspots.data --stdio
	@$(BUILD)/bin/userperf report -i $(BUILD)/hotspots.data --format=flamegraph -o $(BUILD)/hotspots.html
	@echo "flame graph page: $(BUILD)/hotspots.html (open it in a browser)"

bench: build
	@bash bench/run.sh

# Long fuzzing campaigns (docs/reliability.md): every libFuzzer target of fuzz/ for FUZZ_SECONDS
# on a corpus kept in build-asan/fuzz-corpus; FUZZ_TARGETS="perfdata ..." picks some.
FUZZ_SECONDS ?= 600
fuzz: deps
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash scripts/fuzz-campaign.sh

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.h' '*.c')

clean:
	rm -rf build build-asan build-tsan
