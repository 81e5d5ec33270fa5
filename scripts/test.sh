#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 2: set everything up, build, run the whole test suite. .ci/run calls this.
#
# In CI (CI set to anything but empty): compiler warnings are errors (RANKDECK_WERROR=ON), and the
# formatting of the C++ sources is checked before the tests run. The format check fails the run
# only once the tree has been formatted, which the file .ci/format-enforced marks; until then it
# prints how many files differ. After the build, every parser is fuzzed for 30 s (below).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [[ -n ${CI:-} ]]; then
    export RANKDECK_CMAKE_ARGS="-DRANKDECK_WERROR=ON ${RANKDECK_CMAKE_ARGS:-}"
fi
"$here/scripts/bootstrap.sh"
build=${RANKDECK_BUILD_DIR:-$here/build}

if [[ -n ${CI:-} ]]; then
    if [[ -f $here/.ci/format-enforced ]]; then
        "$here/scripts/check-format.sh"
    else
        n=$("$here/scripts/check-format.sh" --count)
        printf 'test: %s files differ from .clang-format (not enforced until .ci/format-enforced exists)\n' "$n"
    fi
fi

# Fuzzing: every parser for RANKDECK_FUZZ_SECONDS s (scripts/fuzz.sh; clang-14, its own
# instrumented build in build-asan/). In CI 30 s each by default, elsewhere only when set;
# RANKDECK_FUZZ_SECONDS=0 turns it off. docs/reliability.md (Fuzzing) has what it costs. A target
# that fails fails the run, after the suite has run. The suite's fuzzreplay_* tests run every
# kept corpus input either way.
fuzz_seconds=${RANKDECK_FUZZ_SECONDS:-}
if [[ -z $fuzz_seconds && -n ${CI:-} ]]; then
    fuzz_seconds=30
fi
fuzz_failed=0
if [[ -n $fuzz_seconds && $fuzz_seconds != 0 ]]; then
    "$here/scripts/fuzz.sh" -t "$fuzz_seconds" || fuzz_failed=1
fi

export QT_QPA_PLATFORM=offscreen
# Tests start real worker processes (2–4 ranks each), so running them one at a time is faster
# on a 2-core machine than fighting over the cores.
suite=0
ctest --test-dir "$build" --output-on-failure --timeout 900 ${RANKDECK_CTEST_ARGS:-} || suite=$?
if ((fuzz_failed)); then
    printf 'test: fuzzing failed (scripts/fuzz.sh above names the target and the input it kept)\n' >&2
    exit 1
fi
exit "$suite"
