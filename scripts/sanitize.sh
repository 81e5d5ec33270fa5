#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The test suite under sanitizers, each in a clang-14 build folder of its own (the worker is left
# out: libtorch is not instrumented; the supervisor, core, the CLI, the GUI and every test are in).
# Tests that start the real worker get the normal build's (uninstrumented: what they check of
# core, the CLI and the GUI still runs under the sanitizers); without one they skip, saying so.
#
#   scripts/sanitize.sh                  ASan + UBSan: build build-asan/, run the whole suite
#   scripts/sanitize.sh --thread         TSan: build build-tsan/, run the tests of core's threaded
#                                        parts (SSH node threads, the stores, the sync scan)
#   scripts/sanitize.sh -R REGEX         only the tests ctest -R picks, and only what they need is
#   scripts/sanitize.sh -L LABEL         built (-L: by label, e.g. unit); either mode
#   scripts/sanitize.sh --build-only     build, run nothing
#   RANKDECK_ASAN_BUILD_DIR / RANKDECK_TSAN_BUILD_DIR   other build folders
#   RANKDECK_JOBS=N                      parallel compile jobs (default 2)
#   RANKDECK_WORKER=PATH                 the worker the tests start (default build/bin/rankdeck-worker)
#
# Not run under ASan: tst_instructioncount (valgrind counts the uninstrumented worker's
# instructions; no instrumented code is under test) and, as they are not in a build without the
# worker, tst_crashhandler and tst_faultinjection (the crash handler links libtorch's c10).
#
# A finding fails the test it happens in (ASan/UBSan abort, TSan exits 66), so the run is clean
# exactly when ctest says 100%. Suppressions are in tests/sanitizers/, each with its reason;
# docs/reliability.md records what the last runs found. The address build also holds the fuzz
# targets (scripts/fuzz.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=${RANKDECK_JOBS:-2}
mode=address
build_only=0
ctest_args=()
while (($#)); do
    case $1 in
    --thread) mode=thread; shift ;;
    --build-only) build_only=1; shift ;;
    -R | -L) ctest_args+=("$1" "$2"); shift 2 ;;
    -h | --help) sed -n '3,26p' "$0"; exit 0 ;;
    *) echo "sanitize: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
say() { printf 'sanitize: %s\n' "$*"; }

# shellcheck source=scripts/instrumented-build.sh
source "$here/scripts/instrumented-build.sh"
export CCACHE_BASEDIR="$here"
supp=$here/tests/sanitizers
if [[ $mode == address ]]; then
    build=${RANKDECK_ASAN_BUILD_DIR:-$here/build-asan}
    rankdeck_configure_instrumented "$build" address || exit $?
    if ((${#ctest_args[@]})); then
        # The tests' executables are their targets (a SPLIT test's entries share one); the
        # programs tests start are built with them.
        mapfile -t picked < <(ctest --test-dir "$build" --show-only=json-v1 "${ctest_args[@]}" |
            python3 -c 'import json, os, sys
print("\n".join(sorted({os.path.basename(t["command"][0]) for t in json.load(sys.stdin)["tests"]})))')
        ((${#picked[@]})) || { echo "sanitize: no test matches ${ctest_args[*]}" >&2; exit 2; }
        say "building ${#picked[@]} tests and the programs they start in $build"
        cmake --build "$build" -j "$jobs" --target "${picked[@]}" rankdeck-cli \
            rankdeck-supervisor scriptedworker rankdeck-loadgen
    else
        say "building everything but the worker in $build"
        cmake --build "$build" -j "$jobs"
    fi
    worker=${RANKDECK_WORKER:-$here/build/bin/rankdeck-worker}
    if [[ -x $worker ]]; then
        ln -sfn "$worker" "$build/bin/rankdeck-worker"
        say "the tests start $worker (uninstrumented: libtorch)"
    else
        rm -f "$build/bin/rankdeck-worker"
        say "no worker at $worker: the tests that start it skip (build it: cmake --build build --target rankdeck-worker)"
    fi
    ctest_args+=(-E '^tst_instructioncount$')
    export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1:check_initialization_order=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp}
    export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp/lsan.supp:print_suppressions=0}
else
    build=${RANKDECK_TSAN_BUILD_DIR:-$here/build-tsan}
    rankdeck_configure_instrumented "$build" thread || exit $?
    # Only what the threaded parts' tests need: a TSan build of everything would not add a thread.
    tests=(tst_logstore tst_metricsstore tst_syncmanifest tst_sshsession tst_sshtransport
        tst_fanout tst_sshkeepalive tst_threadcalls tst_sshauth)
    say "building ${tests[*]} in $build"
    cmake --build "$build" -j "$jobs" --target "${tests[@]}" rankdeck-loadgen
    ((${#ctest_args[@]})) || ctest_args=(-R "^($(IFS='|'; echo "${tests[*]}"))\$")
    export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=0:exitcode=66:second_deadlock_stack=1:suppressions=$supp/tsan.supp}
fi
((build_only)) && exit 0

export QT_QPA_PLATFORM=offscreen
say "running the suite ($mode)"
# Instrumented tests are 2–5 times slower: tests/CMakeLists.txt scales their timeouts.
ctest --test-dir "$build" --output-on-failure "${ctest_args[@]}"
