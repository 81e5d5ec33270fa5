#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 2: set everything up, build, run the whole test suite. .ci/run calls this.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/bootstrap.sh"
build=${RANKDECK_BUILD_DIR:-$here/build}
export QT_QPA_PLATFORM=offscreen
# Tests start real worker processes (2–4 ranks each), so running them one at a time is faster
# on a 2-core machine than fighting over the cores.
ctest --test-dir "$build" --output-on-failure --timeout 900 ${RANKDECK_CTEST_ARGS:-}
