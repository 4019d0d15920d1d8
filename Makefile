# Thin wrapper over CMake. `make run` and `make test` install what is missing.
# The build is silent, its log shown only when it fails (V=1: shown as it runs).
DEBS := cmake gcc make pkg-config libjansson-dev libcmocka-dev valgrind zlib1g-dev libopenblas-dev liblapacke-dev dataset-fashion-mnist fortunes gnuplot-nox openmpi-bin libopenmpi-dev
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

.PHONY: all deps build run test test-plain test-asan bench readme clean

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

test: test-plain test-asan

# Rewrites every output block of README.md from its command (tests/readme.sh).
readme: build
	@tests/readme.sh --write build

bench: build
	./bench/run.sh

clean:
	rm -rf build build-asan
