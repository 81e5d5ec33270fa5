#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# On a machine with CUDA GPUs: build rankdeck-worker against this machine's torch, run a 1-rank
# NCCL training run (mlp and charlm, bf16 autocast), then the DDP benchmark on the GPUs, which
# measures overlap_speedup with NCCL (bucketed all-reduce from the gradient hooks vs all buckets
# after backward): on the 2-core CPU machine it has no spare core to overlap into, on GPUs the
# all-reduce runs on NCCL's own stream while backward goes on.
# Usage: scripts/gpu-check.sh [PYTHON_WITH_TORCH]   (default: python3)
#        scripts/gpu-check.sh --cpu-dry-run [PYTHON]  checks this script's benchmark part on a
#        machine without a GPU (2 CPU ranks over Gloo, few steps, an existing build); its numbers
#        say nothing about GPUs.
# Needs: cmake, ninja or make, a C++20 compiler, pkg-config, libdw-dev and libgloo-dev
# (gloo headers for ProcessGroupGloo.hpp), and a CUDA build of torch in that python.
# Environment: BUILD_DIR (default build-gpu), NPROC (benchmark ranks, default: number of GPUs).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
dry_run=0
if [[ ${1:-} == --cpu-dry-run ]]; then
    dry_run=1
    shift
fi
python=${1:-python3}
build=${BUILD_DIR:-$src/build-gpu}

# The DDP benchmark (bench/ddp/run.sh) and overlap_speedup with the per-run ratios behind it.
# NCCL allows one rank per GPU, and a single rank has no all-reduce to overlap (the worker skips
# the collective), so overlap needs two GPUs or more.
benchmark() {
    local ranks=$1 backend=$2 big=$3 tiny=$4
    echo "== benchmark, $backend, $ranks rank(s)"
    local out; out=$(mktemp)
    NPROC=$ranks BACKEND=$backend BIG_STEPS=$big TINY_STEPS=$tiny REPEAT=${REPEAT:-5} \
        "$src/bench/ddp/run.sh" "$build" "$python" | tee "$out"
    if ((ranks < 2)); then
        echo "overlap_speedup ($backend): not measured: needs 2 or more ranks, one per GPU; this machine has $ranks"
    else
        "$python" - "$out" "$backend" "$ranks" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
runs = [float(w) / float(n) for w, n in re.findall(
    r"run \d+: mlp worker ([\d.]+) python [\d.]+ no-overlap ([\d.]+)", text)]
row = re.search(r"mlp overlap vs --no-overlap\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)", text)
if not row or not runs:
    sys.exit("gpu-check: the benchmark printed no overlap row")
print(f"overlap_speedup ({sys.argv[2]}, {sys.argv[3]} ranks): {float(row.group(1)) / float(row.group(2)):.3f} "
      f"({row.group(1)} vs {row.group(2)} samples/s with --no-overlap; "
      f"runs {', '.join(f'{r:.3f}' for r in runs)})")
PY
    fi
    rm -f "$out"
}

if ((dry_run)); then
    [[ -x $build/bin/rankdeck-worker ]] || { echo "gpu-check: no $build/bin/rankdeck-worker (BUILD_DIR=...)" >&2; exit 2; }
    REPEAT=${REPEAT:-1} benchmark 2 gloo 8 50
    exit 0
fi

"$python" - <<'PY'
import torch, sys
print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, GPUs: {torch.cuda.device_count()}")
for i in range(torch.cuda.device_count()):
    print(f"  cuda:{i} {torch.cuda.get_device_name(i)}")
sys.exit(0 if torch.cuda.is_available() else 1)
PY
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv

gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$src" -B "$build" "${gen[@]}" -DRANKDECK_TORCH_PYTHON="$(command -v "$python")" \
    -DRANKDECK_BUILD_FRONTENDS=OFF -DRANKDECK_BUILD_TESTS=OFF -DCMAKE_POLICY_VERSION_MINIMUM=3.5
cmake --build "$build" --target rankdeck-worker -j"$(nproc)"
worker=$build/bin/rankdeck-worker

run_one() {
    local log; log=$(mktemp)
    echo "== 1 rank, NCCL: $*"
    RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 MASTER_ADDR=127.0.0.1 MASTER_PORT=0 \
        "$worker" --backend nccl --log-every 10 "$@" | tee "$log" | grep -av $'\x1erdk1' || true
    "$python" - "$log" <<'PY'
import json, statistics, sys
events = []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    i = line.find("\x1erdk1 ")
    if i >= 0:
        events.append(json.loads(line[i + 15:]))
kinds = {e["t"] for e in events}
hello = next(e for e in events if e["t"] == "hello")
steps = [e for e in events if e["t"] == "step"]
assert hello["backend"] == "nccl", hello
assert "finished" in kinds, "no finished event"
assert all("gpu_mem" in e for e in steps), "step events lack gpu_mem"
print(f"   device {hello['device']}, {len(steps)} steps, loss {steps[0]['loss']:.4f} -> {steps[-1]['loss']:.4f}, "
      f"median {statistics.median(e['samples_per_s'] for e in steps[5:]):.0f} samples/s, "
      f"gpu_mem {steps[-1]['gpu_mem'] / 2**20:.0f} MiB")
PY
    rm -f "$log"
}
run_one --task mlp --mlp-width 2048 --mlp-depth 7 --steps 60 --batch-size 256 --lr 0.01
run_one --task charlm --steps 200 --batch-size 64

gpus=$("$python" -c 'import torch; print(torch.cuda.device_count())')
benchmark "${NPROC:-$gpus}" nccl 60 2000
