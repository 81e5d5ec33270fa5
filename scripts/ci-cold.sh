#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
#
# How long the README's test command takes on a machine that never built RankDeck (issue 44,
# `ci_cold_minutes`, goal ≤ 45): CI's own command (`CI=true .ci/run`) in a fresh clone of HEAD,
# with every cache this machine keeps hidden from it: an empty ccache, no static-analysis
# cache, no torch venv (pip installs it again from the wheels pip is pointed at), no pip cache.
# The Debian packages cannot be hidden: the ones installed stay installed, so the packages'
# phase is what a machine with them costs (docs/reliability.md gives a fresh machine's).
#
#   scripts/ci-cold.sh [WORKDIR]    WORKDIR (default: a new folder under /tmp) holds the clone,
#                                   the caches and ci.log; removed at the end unless
#                                   RANKDECK_KEEP_COLD=1
#
# Prints the phases as the run's own lines said them, then one JSON line for bench/run:
#   {"results": {"ci_cold_minutes": M, "ci_cold_exit": RC, …}, "detail": "…"}
# Exits with the run's status. Needs both cores for ~45 min: run it on an idle machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/rankdeck-cold.XXXXXX)}
mkdir -p "$work"
[[ -e $work/clone ]] && { echo "ci-cold: $work/clone exists already; give an empty folder" >&2; exit 2; }
cleanup() { [[ ${RANKDECK_KEEP_COLD:-0} == 1 ]] || rm -rf -- "$work/clone" "$work/cache" "$work/xdg"; }
trap cleanup EXIT

git clone -q --no-hardlinks "$here" "$work/clone"
commit=$(git -C "$work/clone" rev-parse --short HEAD)
# XDG_CACHE_HOME moves pip's cache and ccache's default; RANKDECK_CACHE the venv and the
# analysis cache. CCACHE_DIR is set too, in case the environment named one.
export XDG_CACHE_HOME=$work/xdg RANKDECK_CACHE=$work/cache CCACHE_DIR=$work/xdg/ccache
unset RANKDECK_BUILD_DIR RANKDECK_TORCH_PYTHON
log=$work/ci.log
start=$(date +%s)
set +e
(cd "$work/clone" && CI=true bash .ci/run) >"$log" 2>&1
rc=$?
set -e
seconds=$(($(date +%s) - start))

# The phases, as bootstrap.sh and test.sh print them.
grep -E '^(bootstrap: .* took [0-9]+ s|test: .* took [0-9]+ s.*)$' "$log" || true
tail -n 3 "$log"
python3 - "$log" "$seconds" "$rc" "$commit" <<'PY'
import json, re, sys
log, seconds, rc, commit = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
text = open(log, errors="replace").read()
phases = {}
for m in re.finditer(r"^(?:bootstrap|test): (.*?) took (\d+) s", text, re.M):
    phases[m.group(1)] = int(m.group(2))
tests = re.findall(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", text)
summary = f"{tests[-1][0]} % of {tests[-1][2]} tests passed" if tests else "no test summary"
detail = (f"CI=true .ci/run from a clean clone of {commit}, no ccache, venv, pip or analysis "
          f"cache: {seconds / 60:.1f} min, exit {rc}, {summary}; phases (s): " +
          ", ".join(f"{k} {v}" for k, v in phases.items()))
print(json.dumps({"results": {"ci_cold_minutes": seconds / 60, "ci_cold_exit": rc},
                  "detail": detail}))
PY
exit "$rc"
