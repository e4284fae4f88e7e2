# GPUBK: `make run ARGS="..."` builds and runs bk; `make check` runs every test.
BUILD ?= build
PREFIX ?= /usr/local
ARGS ?=
JOBS ?= $(shell nproc)

.PHONY: all deps configure build run check bench soak install clean format tidy

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

bench: build
	bench/run.sh $(BUILD)

# Minutes of mixed load on a daemon with its monitor sampling; reports RSS, fds
# and p99 over time and fails when one keeps growing (not part of `check`).
SOAK_SECONDS ?= 300
SOAK_CLIENTS ?= 48
soak: build
	bench/soak.py $(BUILD)/bk --seconds $(SOAK_SECONDS) --clients $(SOAK_CLIENTS)

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

format:
	clang-format -i $$(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')

tidy: configure
	clang-tidy -p $(BUILD) --quiet $$(git ls-files 'src/*.cc' | grep -v _test.cc)

clean:
	rm -rf $(BUILD)
