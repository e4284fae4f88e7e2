# GPUBK: `make run ARGS="..."` builds and runs bk; `make check` runs every test.
BUILD ?= build
PREFIX ?= /usr/local
ARGS ?=
JOBS ?= $(shell nproc)
ASAN_BUILD ?= build-asan
FUZZ_SECONDS ?= 30
FUZZ_TARGETS ?=

.PHONY: all deps configure build run check check-asan check-tsan bench bench-scale soak fuzz install deb clean format tidy

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

# The same tests on instrumented builds, each in its own directory. check-asan:
# AddressSanitizer with UndefinedBehaviorSanitizer, built by clang-19 with the
# libFuzzer targets in the same build (build-asan), so that `make fuzz` after it
# compiles nothing again. check-tsan: ThreadSanitizer (build-tsan, g++). The
# runtime options are compiled in (tests/sanitizer/hooks.cc): any report fails the run.
$(ASAN_BUILD)/build.ninja:
	@scripts/install-deps fuzz
	CC=clang-19 CXX=clang++-19 cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DBK_SANITIZE=address -DBK_FUZZ=ON

check-asan: deps
	@$(MAKE) --no-print-directory $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	scripts/npm-test-deps
	ctest --test-dir $(ASAN_BUILD) --output-on-failure -j 2

check-tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Release -DBK_SANITIZE=thread
	cmake --build build-tsan -j $(JOBS)
	scripts/npm-test-deps
	ctest --test-dir build-tsan --output-on-failure -j 2

bench: build
	bench/run.sh $(BUILD)

# Cost against ledger size, 1k to 1M bookings, through the daemon and in private
# mode: $(BUILD)/bench/scale.json and scale.txt (bench/plot_scale.py draws them).
# A quick run: make bench-scale BENCH_SIZES="1k 16k"
bench-scale: build
	bench/scale.py $(BUILD)

# Minutes of mixed load on a daemon with its monitor sampling; reports RSS, fds
# and p99 over time and fails when one keeps growing (not part of `check`).
SOAK_SECONDS ?= 300
SOAK_CLIENTS ?= 48
soak: build
	bench/soak.py $(BUILD)/bk --seconds $(SOAK_SECONDS) --clients $(SOAK_CLIENTS)

# libFuzzer targets (src/*/*_fuzz.cc), built in the ASan build directory,
# each run FUZZ_SECONDS seconds (fuzz/run.sh).
fuzz:
	@$(MAKE) --no-print-directory $(ASAN_BUILD)/build.ninja
	cmake --build $(ASAN_BUILD) --target fuzzers -j $(JOBS)
	fuzz/run.sh $(ASAN_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# bk, its manual pages, bash/zsh/fish completion, the systemd unit templates,
# the guides and the bundled Skill under PREFIX.
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The Debian package, left in the build directory: $(BUILD)/gpubk_VERSION-1_ARCH.deb
# (install it with `sudo apt install ./$(BUILD)/gpubk_*.deb`).
deb: build
	cd $(BUILD) && cpack -G DEB

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')

tidy: configure
	clang-tidy -p $(BUILD) --quiet $$(git ls-files 'src/*.cc' | grep -v _test.cc)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-tsan
