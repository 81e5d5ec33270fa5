#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 2: set everything up, build, run the whole test suite. .ci/run calls this.
#
# In CI (CI set to anything but empty): compiler warnings are errors (RANKDECK_WERROR=ON), and the
# formatting of the C++ sources and the include layout (scripts/check-layout.py) are checked
# before the tests run. The format check fails the run only once the tree has been formatted,
# which the file .ci/format-enforced marks; until then it prints how many files differ. After the
# build, every parser is fuzzed by the gate: a fixed seed and a fixed number of inputs, so the
# same commit gets the same answer (below).
#
#   RANKDECK_TEST_LOAD=N     run N busy loops beside the suite (ended with it): CI shares its
#                            machine, and a test that only passes on an idle one is a defect
#   RANKDECK_FUZZ_SECONDS=N  fuzz exploratorily instead (random seed, N s a target); 0: no fuzzing
#   RANKDECK_STATIC_ANALYSIS=1|0  clang-tidy + clazy (scripts/static-analysis.py) on or off;
#                            on by default in CI, off elsewhere. Findings fail the run.
#   RANKDECK_CTEST_ARGS=...  passed to ctest (e.g. "-R tst_guirun --repeat until-fail:3")
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n ${CI:-} ]]; then
    export RANKDECK_CMAKE_ARGS="-DRANKDECK_WERROR=ON ${RANKDECK_CMAKE_ARGS:-}"
fi
"$here/scripts/bootstrap.sh"
build=${RANKDECK_BUILD_DIR:-$here/build}

if [[ -n ${CI:-} ]]; then
    format_start=$SECONDS
    if [[ -f $here/.ci/format-enforced ]]; then
        "$here/scripts/check-format.sh"
    else
        n=$("$here/scripts/check-format.sh" --count)
        printf 'test: %s files differ from .clang-format (not enforced until .ci/format-enforced exists)\n' "$n"
    fi
    printf 'test: the format check took %d s\n' $((SECONDS - format_start))
    # core/'s folders include each other one way only, worker/ has no Qt, core/ no widgets, a
    # long file says why (docs/architecture.md). The suite's layout_check runs it too.
    layout_start=$SECONDS
    python3 "$here/scripts/check-layout.py"
    printf 'test: the layout check took %d s\n' $((SECONDS - layout_start))
fi

# Work started beside the tests (the analysis, busy loops) ends with the run, however it ends;
# the analysis's finished batches stay cached.
hogs=()
analysis_pid=
stop_hogs() { ((${#hogs[@]})) && kill "${hogs[@]}" 2>/dev/null; wait "${hogs[@]}" 2>/dev/null || true; }
stop_background() {
    stop_hogs
    [[ -n $analysis_pid ]] && kill -- "-$analysis_pid" 2>/dev/null
    return 0
}
trap stop_background EXIT

# Static analysis (scripts/static-analysis.py): clang-tidy with .clang-tidy and clazy's level 1
# on the product's sources (core cli gui plot bench; tests/ and worker/ with --all), findings are
# errors. It runs in the background from here on, beside the fuzz gate and the suite, at nice 10:
# much of the suite waits on processes, sshd and Slurm, and the analysis takes that idle CPU
# rather than adding its 13–16 min of CPU to the run; a test that fails only under such load is a
# defect anyway. After the suite the run waits for it and says how long: what it added.
# Results are kept per batch of sources in ~/.cache/rankdeck/static-analysis, so a machine that
# ran it before analyses again only what changed; docs/reliability.md (Static analysis) says
# what a run costs.
analysis=${RANKDECK_STATIC_ANALYSIS:-}
[[ -z $analysis && -n ${CI:-} ]] && analysis=1
analysis_log=$build/static-analysis.log
if [[ $analysis == 1 ]]; then
    analysis_start=$SECONDS
    # its own process group, so that an early end stops its clang-tidy and clazy too
    setsid nice -n 10 python3 "$here/scripts/static-analysis.py" -B "$build" >"$analysis_log" 2>&1 &
    analysis_pid=$!
    printf 'test: static analysis started beside the rest (pid %d, log %s)\n' "$analysis_pid" "$analysis_log"
fi

# Fuzzing (scripts/fuzz.sh; clang-14, its own instrumented build in build-asan/). In CI the gate:
# a fixed seed and fixed run counts on the committed seeds, the same inputs on every run, so a
# commit cannot pass once and fail the next time on a finding that has nothing to do with it.
# RANKDECK_FUZZ_SECONDS=N fuzzes exploratorily instead (a random seed, N s a target), anywhere;
# 0 turns fuzzing off. docs/reliability.md (Fuzzing) says why the two differ and what they cost.
# A target that fails fails the run, after the suite has run. The suite's fuzzreplay_* tests
# run every kept corpus input either way.
fuzz_args=()
if [[ -n ${RANKDECK_FUZZ_SECONDS:-} ]]; then
    [[ $RANKDECK_FUZZ_SECONDS != 0 ]] && fuzz_args=(-t "$RANKDECK_FUZZ_SECONDS")
elif [[ -n ${CI:-} ]]; then
    fuzz_args=(--gate)
fi
fuzz_failed=0
if ((${#fuzz_args[@]})); then
    fuzz_start=$SECONDS
    "$here/scripts/fuzz.sh" "${fuzz_args[@]}" || fuzz_failed=1
    printf 'test: fuzzing took %d s\n' $((SECONDS - fuzz_start))
fi

# Load beside the suite: N processes that each keep a core busy, ended however the script ends.
load=${RANKDECK_TEST_LOAD:-0}
[[ $load =~ ^[0-9]+$ ]] || { printf 'test: RANKDECK_TEST_LOAD wants a number of busy loops, not "%s"\n' "$load" >&2; exit 2; }
for ((i = 0; i < load; i++)); do
    # Not nice'd: it competes with the tests as another job on a shared machine would.
    bash -c 'while :; do :; done' &
    hogs+=($!)
done
((load)) && printf 'test: %d busy loops running beside the suite (pids %s)\n' "$load" "${hogs[*]}"

export QT_QPA_PLATFORM=offscreen
# Tests start real worker processes (2–4 ranks each), so running them one at a time is faster
# on a 2-core machine than fighting over the cores.
suite=0
suite_start=$SECONDS
ctest --test-dir "$build" --output-on-failure --timeout 900 ${RANKDECK_CTEST_ARGS:-} || suite=$?
printf 'test: the suite took %d s\n' $((SECONDS - suite_start))
analysis_failed=0
if [[ -n $analysis_pid ]]; then
    wait_start=$SECONDS
    wait "$analysis_pid" || analysis_failed=1
    analysis_pid=
    cat "$analysis_log"
    printf 'test: static analysis took %d s, %d s of them after the suite\n' \
        $((SECONDS - analysis_start)) $((SECONDS - wait_start))
fi
if ((fuzz_failed)); then
    printf 'test: fuzzing failed (scripts/fuzz.sh above names the target and the input it kept)\n' >&2
    exit 1
fi
if ((analysis_failed)); then
    printf 'test: static analysis failed (scripts/static-analysis.py above names each finding)\n' >&2
    exit 1
fi
exit "$suite"
