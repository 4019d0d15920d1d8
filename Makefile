# Thin wrapper over CMake. `make run` and `make test` install what is missing.
# The build is silent, its log shown only when it fails (V=1: shown as it runs).
DEBS := cmake gcc g++ make pkg-config libjansson-dev libcmocka-dev valgrind zlib1g-dev libopenblas-dev liblapacke-dev dataset-fashion-mnist fortunes gnuplot-nox openmpi-bin libopenmpi-dev
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
V ?= 0

# $(call cmake_build,DIR,CONFIGURE FLAGS): configure and build DIR. Without
# V=1 the output goes to DIR/build.log and is printed only on failure, so
# `make run` shows its result and nothing else.
define cmake_build
	@mkdir -p $(1); \
	if [ "$(V)" = 1 ]; then \
	  cmake -S . -B $(1) $(2) >/dev/null && cmake --build $(1) -j $(JOBS); \
	else \
	  { cmake -S . -B $(1) $(2) && cmake --build $(1) -j $(JOBS); } >$(1)/build.log 2>&1 || \
	  { cat $(1)/build.log; echo "make: the build failed (log: $(1)/build.log)" >&2; exit 1; }; \
	fi
endef

.PHONY: all deps build run test test-plain test-asan test-fuzz test-oom fuzz fuzz-build bench readme install clean

all: build

deps:
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(call cmake_build,build,-DCMAKE_BUILD_TYPE=Release)

run: build
	@./build/topocc compare --default --out build/default.json
	@./build/topocc report build/default.json -o build/report

test-plain: build
	cd build && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	$(call cmake_build,build-asan,-DCMAKE_BUILD_TYPE=Debug -DTOPOCC_SANITIZE=ON)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j $(JOBS)

# Fuzzing (docs/VALIDATION.md, "Fuzzing"): the targets of fuzz/ built with clang
# and libFuzzer in build-fuzz; their packages installed by deps when missing.
# test-fuzz: every seed and regression input once, then 5 s of fuzzing per
# target; fuzz: FUZZ_SECONDS per target, new inputs kept in build-fuzz/work.
FUZZ_DEBS := clang libclang-rt-14-dev
FUZZ_SECONDS ?= 600

fuzz-build:
	@$(MAKE) --no-print-directory deps DEBS="$(DEBS) $(FUZZ_DEBS)"
	$(call cmake_build,build-fuzz,-DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DTOPOCC_FUZZ=ON)

test-fuzz: fuzz-build
	tests/fuzz_smoke.sh build-fuzz 5

fuzz: fuzz-build
	tests/fuzz_smoke.sh build-fuzz $(FUZZ_SECONDS) build-fuzz/work

test: test-plain test-asan test-fuzz

# Out of memory (docs/VALIDATION.md, "Out of memory"): build-oom (library and
# CLI, sanitized) fails the k-th allocation of each of a set of commands and
# checks for one line "out of memory", exit 1, no leak and no half-written
# file. The first two allocations of each call stack by default; OOM_ALL=1:
# every k; OOM_PERSIST=1: every allocation from the k-th on. Not in `make
# test`: it would add about ten minutes to it on two cores.
test-oom: deps
	$(call cmake_build,build-oom,-DCMAKE_BUILD_TYPE=Debug -DTOPOCC_ALLOC_FAIL=ON)
	tests/alloc_fail.sh build-oom

# Rewrites every output block of README.md from its command (tests/readme.sh).
readme: build
	@tests/readme.sh --write build

bench: build
	./bench/run.sh

# The library, its headers and pkg-config file, the program and the profiles
# under PREFIX (docs/LIBRARY.md); the build is configured for PREFIX, so the
# installed program finds the profiles it installed.
PREFIX ?= /usr/local
install: deps
	$(call cmake_build,build,-DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=$(PREFIX))
	@cmake --install build

clean:
	rm -rf build build-asan build-fuzz build-oom
