# userperf: `make run` builds and runs the demo, `make test` builds and runs every test.
# Each target first installs missing Debian packages (scripts/install-deps.sh, idempotent).
JOBS ?= $(shell nproc)
BUILD ?= build
CMAKE_FLAGS ?=

.PHONY: deps build test test-main test-asan test-tsan run bench format clean

deps:
	@bash scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The main build runs every test; an ASan+UBSan build runs the unit and concurrency tests, a TSan
# build the concurrency tests. Each prints ctest's summary; the last line sums the three.
test: deps
	@bash scripts/run-tests.sh

run: build
	@$(BUILD)/bin/userperf demo

bench: build
	@bash bench/run.sh

format:
	@clang-format -i $$(git ls-files '*.cpp' '*.hpp' '*.h' '*.c')

clean:
	rm -rf build build-asan build-tsan
