#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Builds the libFuzzer targets of tests/fuzz/ (clang-14, coverage + ASan + UBSan; the same build
# folder as scripts/sanitize.sh, whose instrumented core they link) and runs each for a while on
# its seed corpus.
#
#   scripts/fuzz.sh                    every target, 30 s each
#   scripts/fuzz.sh -t 600 profile     only the profile reader, 10 minutes
#   scripts/fuzz.sh --build-only       build, run nothing
#   scripts/fuzz.sh --list             the targets
#   RANKDECK_ASAN_BUILD_DIR=DIR        build folder (default build-asan/, shared with sanitize.sh)
#   RANKDECK_JOBS=N                    parallel compile jobs (default 2)
#
# What a run finds is kept under <build>/fuzz-work/<target>/: the corpus it grew (corpus/, fed
# back into the next run) and the inputs that broke a promise (crash-*, leak-*, timeout-*).
# Copy such an input into tests/fuzz/corpus/<target>/ after the fix: the suite's
# fuzzreplay_<target> test then runs it every time. Exit status 1 when any target failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${RANKDECK_ASAN_BUILD_DIR:-$here/build-asan}
jobs=${RANKDECK_JOBS:-2}
seconds=30
build_only=0
list_only=0
targets=()
while (($#)); do
    case $1 in
    -t | --time) seconds=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --list) list_only=1; shift ;;
    -h | --help) sed -n '3,19p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
    esac
done
say() { printf 'fuzz: %s\n' "$*"; }

# shellcheck source=scripts/instrumented-build.sh
source "$here/scripts/instrumented-build.sh"
export CCACHE_BASEDIR="$here"
rankdeck_configure_instrumented "$build" fuzz || exit $?
mapfile -t all <"$build/fuzz-targets.txt"
if ((list_only)); then
    printf '%s\n' "${all[@]}"
    exit 0
fi
((${#targets[@]})) || targets=("${all[@]}")
for t in "${targets[@]}"; do
    [[ " ${all[*]} " == *" $t "* ]] || { echo "fuzz: no target $t (have: ${all[*]})" >&2; exit 2; }
done
say "building ${targets[*]} in $build"
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"
((build_only)) && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$here/tests/sanitizers/ubsan.supp}
failed=()
for t in "${targets[@]}"; do
    work=$build/fuzz-work/$t
    mkdir -p "$work/corpus"
    log=$work/last-run.log
    say "$t: ${seconds}s"
    if "$build/bin/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -print_final_stats=1 -artifact_prefix="$work/" \
        "$work/corpus" "$here/tests/fuzz/corpus/$t" >"$log" 2>&1; then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
        cov=$(grep -oE 'DONE[[:space:]]+cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | sed -E 's/DONE[[:space:]]+//' || true)
        say "$t: ok, $runs inputs, $cov, corpus $(find "$work/corpus" -type f | wc -l) files"
    else
        failed+=("$t")
        grep -E 'ERROR: |fuzz check failed|runtime error|Test unit written to' "$log" | head -5 >&2 || true
        say "$t: FAILED (log: $log)"
    fi
done
if ((${#failed[@]})); then
    say "failed: ${failed[*]}"
    exit 1
fi
say "all ${#targets[@]} targets ok"
