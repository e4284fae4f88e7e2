# GPUBK: `make run ARGS="..."` builds and runs bk; `make check` runs every test.
BUILD ?= build
PREFIX ?= /usr/local
ARGS ?=
JOBS ?= $(shell nproc)
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?=

.PHONY: all deps configure build run check check-asan check-tsan bench soak fuzz install clean format tidy

all: build

deps:
	@scripts/install-deps

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release

configure: $(BUILD)/build.ninja

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

# The embedded default: a private ledger in ~/.local/share/gpubk (or $BK_DATA_DIR);
# simulated GPUs from examples/sim-4gpu.json when this machine has no NVIDIA driver.
run: build
	@scripts/run-bk $(ARGS)

check: build
	scripts/npm-test-deps
	ctest --test-dir $(BUILD) --output-on-failure -j 2

# The same tests on instrumented builds, each in its own directory: AddressSanitizer with
# UndefinedBehaviorSanitizer (build-asan) and ThreadSanitizer (build-tsan). The runtime
# options are compiled in (tests/sanitizer/hooks.cc): any report fails the run.
check-asan: deps
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Release -DBK_SANITIZE=address
	cmake --build build-asan -j $(JOBS)
	scripts/npm-test-deps
	ctest --test-dir build-asan --output-on-failure -j 2

check-tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Release -DBK_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	scripts/npm-test-deps
	ctest --test-dir build-tsan --output-on-failure -j 2

bench: build
	bench/run.sh $(BUILD)

# Minutes of mixed load on a daemon with its monitor sampling; reports RSS, fds
# and p99 over time and fails when one keeps growing (not part of `check`).
SOAK_SECONDS ?= 300
SOAK_CLIENTS ?= 48
soak: build
	bench/soak.py $(BUILD)/bk --seconds $(SOAK_SECONDS) --clients $(SOAK_CLIENTS)

# libFuzzer targets (src/*/*_fuzz.cc) built by clang-19 with ASan and UBSan in
# their own build directory, each run FUZZ_SECONDS seconds (fuzz/run.sh).
$(FUZZ_BUILD)/build.ninja:
	CC=clang-19 CXX=clang++-19 cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DBK_FUZZ=ON -DBK_TESTS=OFF

fuzz:
	@scripts/install-deps fuzz
	@$(MAKE) --no-print-directory $(FUZZ_BUILD)/build.ninja
	cmake --build $(FUZZ_BUILD) --target fuzzers -j $(JOBS)
	fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')

tidy: configure
	clang-tidy -p $(BUILD) --quiet $$(git ls-files 'src/*.cc' | grep -v _test.cc)

clean:
	rm -rf $(BUILD) $(FUZZ_BUILD) build-asan build-tsan
