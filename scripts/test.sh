#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 2: set everything up, build, run the whole test suite. .ci/run calls this.
#
# In CI (CI set to anything but empty): compiler warnings are errors (RANKDECK_WERROR=ON), and the
# formatting of the C++ sources is checked before the tests run. The format check fails the run
# only once the tree has been formatted, which the file .ci/format-enforced marks; until then it
# prints how many files differ.
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

# RANKDECK_FUZZ_SECONDS=N: also fuzz every parser N s (scripts/fuzz.sh; clang-14, its own
# instrumented build in build-asan/, about 90 compiles cold). Off by default: docs/reliability.md
# has what it costs. The suite's fuzzreplay_* tests run every kept corpus input either way.
if [[ -n ${RANKDECK_FUZZ_SECONDS:-} ]]; then
    "$here/scripts/fuzz.sh" -t "$RANKDECK_FUZZ_SECONDS"
fi

export QT_QPA_PLATFORM=offscreen
# Tests start real worker processes (2–4 ranks each), so running them one at a time is faster
# on a 2-core machine than fighting over the cores.
ctest --test-dir "$build" --output-on-failure --timeout 900 ${RANKDECK_CTEST_ARGS:-}
