# GPUBK: `make run ARGS="..."` builds and runs bk; `make check` runs every test.
BUILD ?= build
PREFIX ?= /usr/local
ARGS ?=
JOBS ?= $(shell nproc)

.PHONY: all deps configure build run check check-asan check-tsan bench install clean format tidy

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

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')

tidy: configure
	clang-tidy -p $(BUILD) --quiet $$(git ls-files 'src/*.cc' | grep -v _test.cc)

clean:
	rm -rf $(BUILD) build-asan build-tsan
