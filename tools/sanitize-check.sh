#!/usr/bin/env bash
# The C++ core under AddressSanitizer and UndefinedBehaviorSanitizer: configure
# a separate build directory (the wheel's own build is untouched), build the
# core and its C++ tests with the sanitizers, and run them with ctest. Any
# sanitizer report aborts the test that caused it, so ctest fails.
#
# Usage: tools/sanitize-check.sh [build-dir]   (default: build/sanitize)
# Environment: SPATIALOBS_FUZZ_ITERATIONS (inputs for the fuzz_boxes test,
# default 3000), JOBS (parallel build jobs, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/sanitize}"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Debug \
  -DSPATIALOBS_BUILD_TESTS=ON -DSPATIALOBS_SANITIZE=ON \
  -DSPATIALOBS_FUZZ_ITERATIONS="${SPATIALOBS_FUZZ_ITERATIONS:-3000}" >/dev/null
cmake --build "$build" --parallel "${JOBS:-2}"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
ctest --test-dir "$build" --output-on-failure --timeout 300
