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
#
# A sentinel process sits in the suite's process group while ctest runs: nothing of the suite may
# signal it, so the run fails, naming the test that was running, if it died. A watcher in a
# session of its own says the same if this shell vanished with its whole group, which leaves
# nothing in the group to say it (docs/reliability.md, "RankDeck never signals a process it did
# not start").
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

# A process named by its pid and its start (field 22 of /proc/PID/stat, clock ticks after boot):
# bash reaps a background job as soon as it ends, and its pid may then be anyone's, so what this
# script started is signalled only while `running PID START` says it is still that process. The
# command name may hold spaces and ')': the fields are counted after the last ')'.
# start_of prints nothing for a process that is gone already (then `running` is always false).
start_of() {
    local s
    { read -r s <"/proc/$1/stat"; } 2>/dev/null || return 0
    s=${s##*)}
    set -- $s
    echo "${20}"
}
running() {
    local s want=$2
    [[ -n $want ]] && { read -r s <"/proc/$1/stat"; } 2>/dev/null || return 1
    s=${s##*)}
    set -- $s
    [[ $1 != [ZX] && ${20} == "$want" ]]
}
group_of() {
    local s
    read -r s <"/proc/$1/stat"
    s=${s##*)}
    set -- $s
    echo "$3"
}
# The test ctest started last, from its progress as it printed it.
last_started() { sed -n 's/^ *Start *[0-9]*: //p' "$1" 2>/dev/null | tail -n 1; }

# Work started beside the tests (the analysis, busy loops) ends with the run, however it ends;
# the analysis's finished batches stay cached.
hogs=()
hog_starts=()
analysis_pid=
analysis_ticks=
stop_hogs() {
    local i
    for i in "${!hogs[@]}"; do
        running "${hogs[i]}" "${hog_starts[i]}" && kill "${hogs[i]}" 2>/dev/null
    done
    wait "${hogs[@]}" 2>/dev/null || true
}
# Its group, which it leads (setsid), only while it is the analysis still: a group id is a pid.
stop_background() {
    ((${#hogs[@]})) && stop_hogs
    [[ -n $analysis_pid ]] && running "$analysis_pid" "$analysis_ticks" &&
        kill -- "-$analysis_pid" 2>/dev/null
    return 0
}
progress=$build/ctest-progress.log
sentinel=
sentinel_start=
watch_done=
caught=
on_exit() {
    local status=$?
    set +e # on the way out, whatever fails here: the rest still has to be stopped
    [[ -n $watch_done ]] && : >"$watch_done"
    if [[ -n $caught ]]; then
        printf 'test: got SIG%s (this shell alone, or the whole process group of the suite); the last test started: %s\n' \
            "$caught" "$(last_started "$progress")" >&2
    fi
    [[ -n $sentinel ]] && running "$sentinel" "$sentinel_start" && kill "$sentinel" 2>/dev/null
    stop_background
    return "$status"
}
trap on_exit EXIT
for sig in HUP INT TERM USR1 USR2; do
    # shellcheck disable=SC2064 # the signal's name, now
    trap "caught=$sig; exit $((128 + $(kill -l "$sig")))" "$sig"
done

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
    analysis_ticks=$(start_of "$analysis_pid")
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
    hog_starts+=("$(start_of $!)")
done
((load)) && printf 'test: %d busy loops running beside the suite (pids %s)\n' "$load" "${hogs[*]}"

export QT_QPA_PLATFORM=offscreen
# Tests start real worker processes (2–4 ranks each), so running them one at a time is faster
# on a 2-core machine than fighting over the cores.
suite=0
suite_start=$SECONDS
# The sentinel, in this shell's process group as every test is: nothing may signal it. The
# watcher polls it and this shell each second from a session of its own, so that kill(0, …) or
# `kill -- -PGID` with the suite's group, and kill(-1), are caught whatever they take with them.
sleep infinity &
sentinel=$!
sentinel_start=$(start_of "$sentinel")
sentinel_note=$build/sentinel-death.txt
watch_done=$build/.suite-watch-done.$$
rm -f -- "$sentinel_note" "$watch_done"
watch_suite() { # SHELL SHELL_START SENTINEL SENTINEL_START PROGRESS NOTE DONE
    local alive=1
    while running "$1" "$2"; do
        if ((alive)) && ! running "$3" "$4" && [[ ! -e $7 ]]; then
            alive=0
            printf 'at %s, while %s ran' "$(date -u +%H:%M:%S)" "$(last_started "$5")" >"$6"
        fi
        sleep 1
    done
    [[ -e $7 ]] && { rm -f -- "$7"; exit 0; }
    printf '\ntest: scripts/test.sh (pid %d) vanished without a word, with its process group (ctest, the test, a timeout above it): something sent SIGKILL to the whole group (kill(0, …), kill -- -PGID) or to every process (kill(-1)). The last test started: %s\n' \
        "$1" "$(last_started "$5")" >&2
}
setsid bash -c "$(declare -f running last_started watch_suite); watch_suite \"\$@\"" watch-suite \
    "$$" "$(start_of $$)" "$sentinel" "$sentinel_start" "$progress" "$sentinel_note" "$watch_done" \
    </dev/null &
# ctest's progress as it prints it ("Start N: name"), for the messages above: LastTest.log is
# written only once the suite has ended.
ctest --test-dir "$build" --output-on-failure --timeout 900 ${RANKDECK_CTEST_ARGS:-} |
    tee "$progress" || suite=$?
printf 'test: the suite took %d s\n' $((SECONDS - suite_start))
sentinel_failed=0
if ! running "$sentinel" "$sentinel_start"; then
    sentinel_failed=1
    when=$(cat -- "$sentinel_note" 2>/dev/null) || when="while $(last_started "$progress") ran"
    printf 'test: the sentinel (pid %d, in the suite'"'"'s process group %d) died during the suite, %s: something signalled a process or a process group that is not its own (docs/reliability.md, "RankDeck never signals a process it did not start")\n' \
        "$sentinel" "$(group_of $$)" "$when" >&2
fi
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
((sentinel_failed)) && exit 1
exit "$suite"
