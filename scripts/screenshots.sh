#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Renders every page of the app (a healthy 4-rank run, the same at another learning rate compared
# with it on the Loss page, and one with an injected crash on the built-in local profile, the
# launch form and the profile editor) under Xvfb into docs/screenshots/ for the README. Uses a
# throw-away home so that your own profiles and runs do not appear in the pictures.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${RANKDECK_BUILD_DIR:-$here/build}/bin
out=${1:-$here/docs/screenshots}
for tool in xvfb-run "$bin/rankdeck" "$bin/rankdeck-worker"; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "screenshots: $tool not found (build first: scripts/bootstrap.sh; Xvfb: apt-get install xvfb)" >&2
        exit 1
    fi
done
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$out"
out=$(cd "$out" && pwd)
export XDG_CONFIG_HOME=$scratch/config XDG_DATA_HOME=$scratch/data XDG_RUNTIME_DIR=$scratch/run
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
export RANKDECK_WORKER=$bin/rankdeck-worker
# The user's-program pages run a Python DDP script with the torch environment's Python.
export RANKDECK_SOURCE_DIR=$here
if [[ -z ${RANKDECK_TORCH_PYTHON:-} ]]; then
    cache=${RANKDECK_BUILD_DIR:-$here/build}/CMakeCache.txt
    RANKDECK_TORCH_PYTHON=$(sed -n 's/^RANKDECK_TORCH_PYTHON:[A-Z]*=//p' "$cache" 2>/dev/null || true)
    export RANKDECK_TORCH_PYTHON
fi
export QT_QPA_PLATFORM=xcb
xvfb-run -a -s "-screen 0 1600x1000x24" timeout 600 "$bin/rankdeck" --screenshots "$out"
echo "screenshots: written to $out"
