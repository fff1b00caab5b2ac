#!/usr/bin/env bash
# The CPU suite and the CLI tests under AddressSanitizer + UndefinedBehaviorSanitizer (issue 11,
# "And keep it that way"): a CPU build (MLACHECK_GPU=none) in the configuration of
# scripts/sanitized-build.sh (clang-22, -fno-sanitize-recover=all: the first report fails the test
# that made it), which scripts/fuzz.sh shares when given the same build directory.
# Usage: scripts/sanitize.sh [build-dir]   (default build/sanitize)
# Measured on 2 cores: build 428 s, tests 128 s.
#
# How the tests run, to stay in CI's budget:
# - The GoogleTest suite runs through `mlacheck selftest` in one process per core
#   (GTEST_TOTAL_SHARDS), not through CTest, which starts the binary once per test: 711 starts of
#   the instrumented binary at about 0.6 s each (start-up and test registration) are 7 minutes of
#   CPU, half of what `ctest` spent on the suite (7.3 minutes on 2 cores). Same tests, same binary.
#   A sanitizer report aborts its shard: the shard's later tests do not run until it is fixed.
# - The other CTest tests (CLI, Python interop, data) run under ctest beside the shards.
# - Left out: each test that takes over 45 s here and runs only code that faster tests run too
#   (scripts/test.sh runs them in the normal build). Measured under the sanitizers:
#     data.harness_manifest_regenerates  93 s: gen --check-manifest of 6 harness shapes (<= 262144
#                                        keys); data.small_golden_regenerates runs it on small ones
#     cli.power_harness_shapes           95 s: `power` on bs4_kv1024 and bs32_kv1024; what it scores
#                                        with (check/power.cpp) runs in the CheckPower tests
#     ScheduleFreeGate.AcceptsTheRecipeUnderAnySchedule
#                                        57 s: the schedule-free bound over 7 recipes x 6 schedules x
#                                        2 bases x 3 profiles; the emulation and the bound run in
#                                        the other ScheduleFreeGate and RefEmulated tests
#     cli.example_gate                   40-65 s: compare / identify / drift on the worked example;
#                                        their code runs in check.compare_cli, cli.poisoned_golden
#                                        and the ScheduleFreeGate / CheckDrift unit tests (CI's time
#                                        budget: .ci/run stays under 30 minutes)
#     tier.quick.verify                  `verify --tier quick` without a GPU: the CPU reference and the
#                                        gate's power on 12 cases, code the RefEmulated, RefExact and
#                                        CheckPower tests run (11 s in the normal build)
#     cli.ref_gen_memory                 measures peak RSS, which ASan's shadow memory changes; the
#                                        normal build runs it
#     EigenOracle.AgreesWithRefOnEveryCaseOfTheTier
#                                        the quick tier through two fp64 references (4.5 s in the
#                                        normal build); its power test still runs here
#   The `long` label (the standard and full tiers, minutes even in the normal build) never runs here.
#   Kept although slow: cli.hostile_input (60 s), the test of the hostile-input paths themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/sanitize}
cores=$(nproc)
source scripts/sanitized-build.sh
ctest_excluded='^(data\.harness_manifest_regenerates|cli\.power_harness_shapes|cli\.example_gate|tier\.quick\.verify|cli\.ref_gen_memory)$'
gtest_excluded='ScheduleFreeGate.AcceptsTheRecipeUnderAnySchedule:EigenOracle.AgreesWithRefOnEveryCaseOfTheTier'
# Fewer random cases per property under the sanitizers (100 in the normal build): the generator and
# the references' code paths are the same, CI's 30 minutes are not.
export RC_PARAMS="${RC_PARAMS:-max_success=25}"

# The same venv recipe as scripts/test.sh: the CLI tests drive the binary from Python.
venv="$build/venv"
if [[ ! -x "$venv/bin/python" ]] || ! "$venv/bin/python" -c 'import safetensors, numpy, xxhash, ml_dtypes' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check safetensors numpy xxhash ml_dtypes
fi

configure_sanitized "$build" -DMLACHECK_PYTHON="$PWD/$venv/bin/python"
SECONDS=0
cmake --build "$build" --target mlacheck -j "$cores"
echo "sanitize: build took ${SECONDS} s"

# The suite's two halves side by side, which keeps both cores busy: the GoogleTest shards in the
# background (from the binary's directory, where CTest runs them too), the CTest tests in front. Passive OpenMP waits: more threads than cores here, and spinning
# workers would only steal the cores from each other.
export OMP_WAIT_POLICY=passive
SECONDS=0
failed=0
shards=()
for ((i = 0; i < cores; ++i)); do
  (cd "$build/cli" && GTEST_TOTAL_SHARDS=$cores GTEST_SHARD_INDEX=$i ./mlacheck selftest \
    --gtest_brief=1 --gtest_filter="-$gtest_excluded" >"../selftest-shard-$i.log" 2>&1) &
  shards+=($!)
done
ctest --test-dir "$build" --output-on-failure -j "$cores" -LE '^(selftest|long)$' -E "$ctest_excluded" || failed=1
echo "sanitize: CTest tests done after ${SECONDS} s"
for ((i = 0; i < cores; ++i)); do
  log="$build/selftest-shard-$i.log"
  if wait "${shards[$i]}"; then
    tail -n 4 "$log" | grep -E '^\[ *(PASSED|SKIPPED) *\]' | sed "s/^/selftest shard $i: /"
  else
    failed=1
    echo "== selftest shard $i FAILED ($log); a sanitizer report ends the shard there:"
    grep -E -B2 -A40 'FAILED  \]|ERROR: |runtime error' "$log" | head -n 150
  fi
done
echo "sanitize: tests took ${SECONDS} s"
exit "$failed"
