#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# README command 1: set everything up, then run the 2-rank demo on the built-in local profile:
# in the GUI when there is a display, through the headless CLI when there is none.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/bootstrap.sh"
bin=${RANKDECK_BUILD_DIR:-$here/build}/bin
demo_args=(--task charlm --steps 300 --batch-size 32 --log-every 10 --shuffle)
if [[ -n ${DISPLAY:-}${WAYLAND_DISPLAY:-} && ${RANKDECK_HEADLESS:-0} != 1 ]]; then
    exec "$bin/rankdeck" --demo
fi
echo "demo: no display, running the demo through rankdeck-cli"
exec "$bin/rankdeck-cli" launch --profile local --nproc-per-node 2 --name demo -- "${demo_args[@]}"
