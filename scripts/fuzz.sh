#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Builds the libFuzzer targets of tests/fuzz/ (clang-14, coverage + ASan + UBSan; the same build
# folder as scripts/sanitize.sh, whose instrumented core they link) and runs each on its seed
# corpus. Two ways, for two purposes (docs/reliability.md, Fuzzing):
#
#   exploratory (the default; for developers): a random seed, for a time, on the seeds plus the
#   corpus earlier runs grew. Finds new bugs; the same commit can give another answer each run.
#     scripts/fuzz.sh                    every target, 30 s each
#     scripts/fuzz.sh -t 600 profile     only the profile reader, 10 minutes
#   gating (--gate; what CI runs): a fixed seed and a fixed number of inputs per target
#   (tests/fuzz/gate-runs.txt), on the committed seeds only, in a fresh folder. The same commit
#   gives the same inputs, the same coverage and the same answer on every run, from any clone
#   (machines whose kernels lay out memory differently may still part; docs/reliability.md).
#     scripts/fuzz.sh --gate             every target
#     scripts/fuzz.sh --gate --seed 7    the same, another fixed seed
#
#   scripts/fuzz.sh --build-only       build, run nothing
#   scripts/fuzz.sh --list             the targets
#   RANKDECK_ASAN_BUILD_DIR=DIR        build folder (default build-asan/, shared with sanitize.sh)
#   RANKDECK_JOBS=N                    parallel compile jobs (default 2)
#
# What an exploratory run finds is kept under <build>/fuzz-work/<target>/: the corpus it grew
# (corpus/, fed back into the next run) and the inputs that broke a promise (crash-*, leak-*,
# timeout-*). Copy such an input into tests/fuzz/corpus/<target>/ in the commit that fixes it:
# the suite's fuzzreplay_<target> test then runs it every time, and the gate starts from it.
# Exit status 1 when any target failed.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${RANKDECK_ASAN_BUILD_DIR:-$here/build-asan}
jobs=${RANKDECK_JOBS:-2}
seconds=30
build_only=0
list_only=0
gate=0
seed=1
targets=()
while (($#)); do
    case $1 in
    -t | --time) seconds=$2; shift 2 ;;
    --gate) gate=1; shift ;;
    --seed) seed=$2; shift 2 ;;
    --build-only) build_only=1; shift ;;
    --list) list_only=1; shift ;;
    -h | --help) sed -n '3,31p' "$0"; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
    esac
done
[[ $seconds =~ ^[0-9]+$ ]] || { echo "fuzz: -t wants whole seconds, not '$seconds'" >&2; exit 2; }
[[ $seed =~ ^[0-9]+$ && $seed != 0 ]] || { echo "fuzz: --seed wants a positive number, not '$seed'" >&2; exit 2; }
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
build_start=$SECONDS
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"
# To stderr, with the per-target times: the gate's stdout is only what seed and counts decide.
printf 'fuzz: built in %d s\n' $((SECONDS - build_start)) >&2
((build_only)) && exit 0

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:suppressions=$here/tests/sanitizers/ubsan.supp}
# Qt seeds its hashes at random per process; the order a QHash is walked in then changes the
# code paths a target covers, and with them libFuzzer's choices. A fixed hash seed keeps the
# gate's runs identical.
((gate)) && export QT_HASH_SEED=0
# Targets that hand a parser a file (sshconfig: libssh reads its config from a path) write it
# per input: on a disk shared with builds that made the gate 10× slower (187 against 1,666
# inputs/s), so scratch files go to memory where there is a tmpfs.
[[ -d /dev/shm && -w /dev/shm ]] && export TMPDIR=/dev/shm

# The gate's inputs per target: "target runs" lines, sized so that all targets take about five
# minutes on a 2-core machine under ASan (docs/reliability.md has the times they were sized by).
gate_runs() {
    local runs
    runs=$(awk -v t="$1" '$1 == t { print $2 }' "$here/tests/fuzz/gate-runs.txt")
    [[ $runs =~ ^[0-9]+$ ]] || { echo "fuzz: no run count for $1 in tests/fuzz/gate-runs.txt" >&2; return 1; }
    echo "$runs"
}

# The gate runs each target with address-space randomisation off (setarch -R). libFuzzer takes
# the operands of the target's comparisons as material for new inputs, and some of them are
# pointers: with the addresses moving from run to run, two gates parted after ~3,000 inputs
# (one mutated with the bytes "\210\354\035\000`a\000\000", an address).
# Randomisation off is not enough: where the stack's contents begin depends on the bytes the
# kernel puts above them (argv, the environment, the path the binary was started by), so the
# same binaries in /work/main and /work/ci1 (one byte longer or shorter a path) parted too
# (linesplitter: 188 against 189 new corpus files). So a target runs in a fixed place, the same
# on every clone: a folder of this user's under /dev/shm (or /tmp) holding a link to the binary,
# a copy of the seeds, the corpus it grows and its scratch files, started as ./fuzz_<target>
# with relative paths, an environment of fixed names and values (env -i) and an 8 MiB stack
# limit (the kernel places the mappings below the stack by that limit). Results are copied back
# to <build>/fuzz-work/<target>/gate/ afterwards; a lock keeps two gates out of each other's way.
runner=()
gate_root=""
if ((gate)); then
    if setarch -R true 2>/dev/null; then
        runner=(setarch -R)
    else
        say "warning: setarch -R does not work here; the gate's inputs may differ from run to run"
    fi
    shm=/tmp
    [[ -d /dev/shm && -w /dev/shm ]] && shm=/dev/shm
    gate_root=$shm/rankdeck-fuzz-gate-$(id -u)
    # Ours alone: a folder another user made (or a link) is refused, not used.
    mkdir -m 700 "$gate_root" 2>/dev/null || true
    if [[ -L $gate_root || ! -d $gate_root || ! -O $gate_root ]]; then
        echo "fuzz: $gate_root is not a folder of this user's; remove it or run as its owner" >&2
        exit 2
    fi
    chmod 700 "$gate_root"
    exec 9>"$gate_root/lock"
    flock 9
    cp "$here/tests/sanitizers/ubsan.supp" "$gate_root/ubsan.supp"
    # Fixed, whatever the caller's ASAN_OPTIONS: they are part of what the gate's answer depends on.
    gate_asan=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
fi

# CPU seconds the finished children used so far, into $children_cpu (bash's `times`, second line;
# not in a $(...) subshell, which starts its own count at zero): the gate is sized by CPU time,
# which a busy machine changes far less than wall time.
read_children_cpu() {
    local f=${TMPDIR:-/tmp}/fuzz-times.$$
    times >"$f"
    children_cpu=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); n += p[1] * 60 + p[2] } printf "%d", n }' "$f")
    rm -f "$f"
}

# One target's run, in the gate's fixed place or in its exploration folder ($t, $runs, $log
# and $gate_dir are the loop's below).
if ((gate)); then
    run_target() {
        local place=$gate_root/run
        rm -rf "$place" && mkdir -p "$place/tmp" "$place/corpus"
        cp -r "$here/tests/fuzz/corpus/$t" "$place/seeds"
        ln -s "$build/bin/fuzz_$t" "$place/fuzz_$t"
        local status=0
        (
            cd "$place" && ulimit -s 8192 &&
                exec env -i PATH=/usr/bin:/bin HOME="$place" LANG=C.UTF-8 QT_HASH_SEED=0 \
                    TMPDIR="$place/tmp" ASAN_OPTIONS="$gate_asan" \
                    UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$gate_root/ubsan.supp" \
                    "${runner[@]}" "./fuzz_$t" -seed="$seed" -runs="$runs" -reload=0 -timeout=60 \
                    -artifact_prefix=./ -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
                    corpus seeds
        ) >"$log" 2>&1 || status=$?
        cp -r "$place/corpus/." "$gate_dir/corpus/"
        find "$place" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
            -o -name 'oom-*' \) -exec cp {} "$gate_dir/" \;
        rm -rf "$place"
        return $status
    }
else
    run_target() {
        "$build/bin/fuzz_$t" "$@" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
            "$here/tests/fuzz/corpus/$t" >"$log" 2>&1
    }
fi

failed=()
run_start=$SECONDS
for t in "${targets[@]}"; do
    work=$build/fuzz-work/$t
    mkdir -p "$work/corpus"
    if ((gate)); then
        runs=$(gate_runs "$t") || exit 2
        # A fresh, empty folder for what this run adds: the gate reads only committed seeds.
        gate_dir=$work/gate
        rm -rf "$gate_dir" && mkdir -p "$gate_dir/corpus"
        log=$gate_dir/run.log
        say "$t: seed $seed, $runs inputs"
        # run_target below: -reload=0, since libFuzzer re-reads its corpus folder every second by
        # default, and what it finds there at that moment shifts every input after it (two runs
        # parted after ~8,600 inputs); a timeout of 60 s, since a machine under load must not
        # turn slowness into a failure.
    else
        log=$work/last-run.log
        say "$t: ${seconds}s"
        set -- -max_total_time="$seconds" -timeout=10 -artifact_prefix="$work/" "$work/corpus"
    fi
    start=$SECONDS
    read_children_cpu
    cpu_start=$children_cpu
    if run_target "$@"; then
        done_runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
        cov=$(grep -oE 'DONE[[:space:]]+cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | sed -E 's/DONE[[:space:]]+//' || true)
        if ((gate)); then
            # Only what the seed and the run count decide, so two runs print the same lines;
            # the time goes to stderr.
            say "$t: ok, $done_runs inputs, $cov, $(find "$gate_dir/corpus" -type f | wc -l) new corpus files"
            read_children_cpu
            printf 'fuzz: %s: %d s (%d s of CPU)\n' "$t" $((SECONDS - start)) $((children_cpu - cpu_start)) >&2
        else
            say "$t: ok, $done_runs inputs, $cov, corpus $(find "$work/corpus" -type f | wc -l) files"
        fi
    else
        failed+=("$t")
        grep -E 'ERROR: |fuzz check failed|runtime error|Test unit written to' "$log" | head -5 >&2 || true
        say "$t: FAILED (log: $log)"
    fi
done
printf 'fuzz: ran the targets in %d s\n' $((SECONDS - run_start)) >&2
if ((${#failed[@]})); then
    say "failed: ${failed[*]}"
    exit 1
fi
say "all ${#targets[@]} targets ok"
