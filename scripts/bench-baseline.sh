#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Compares benchmark results with a baseline and exits 1 when a key with a goal moved the wrong
# way beyond its spread (docs/benchmarks.md, "Catching a regression"); the logic is
# bench/benchcheck.py's, which needs only the system's python3.
# Usage: scripts/bench-baseline.sh [--compare FILE] [NEW]
#   NEW   the results to judge (default: bench/results/latest.json)
#   FILE  the baseline (default: bench/results/latest.json as committed at HEAD)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$here/bench/benchcheck.py" "$@"
