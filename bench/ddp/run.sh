#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# rankdeck-worker against PyTorch's DDP (torchrun, same torch), 2 CPU ranks over Gloo:
#   the ~25M-parameter MLP, the tiny `linear` task, and bucketed overlap vs all-reduce after
#   backward. Prints samples/s (median over timed steps) and the ratios.
# Usage: bench/ddp/run.sh [BUILD_DIR] [PYTHON]    (defaults: build, the rankdeck torch venv)
# Environment: NPROC (ranks, default 2), BIG_STEPS, TINY_STEPS, BACKEND (gloo), REPEAT (3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
python=${2:-${RANKDECK_TORCH_PYTHON:-$HOME/.cache/rankdeck/torch-venv/bin/python}}
worker=$build/bin/rankdeck-worker
nproc=${NPROC:-2}
big_steps=${BIG_STEPS:-25}
tiny_steps=${TINY_STEPS:-400}
backend=${BACKEND:-gloo}
[ -x "$worker" ] || { echo "run.sh: $worker not found (build rankdeck-worker first)" >&2; exit 2; }
# Same threading as torchrun gives each rank.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Median samples_per_s of rank 0's step events after the first 5 steps.
worker_rate() {
    local port; port=$(free_port)
    local out; out=$(mktemp)
    local errs; errs=$(mktemp -d)
    local failed=0
    for ((r = 1; r < nproc; r++)); do
        RANK=$r WORLD_SIZE=$nproc LOCAL_RANK=$r LOCAL_WORLD_SIZE=$nproc MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
            "$worker" --backend "$backend" --log-every 1000000 "$@" >/dev/null 2>"$errs/rank$r.err" &
    done
    RANK=0 WORLD_SIZE=$nproc LOCAL_RANK=0 LOCAL_WORLD_SIZE=$nproc MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
        "$worker" --backend "$backend" --log-every 1000000 "$@" >"$out" 2>"$errs/rank0.err" || failed=1
    wait || failed=1
    if ((failed)); then
        # Say which run failed and how, instead of a bare exit status.
        echo "run.sh: rankdeck-worker $* failed:" >&2
        for f in "$errs"/*.err; do echo "--- ${f##*/}" >&2; tail -n 15 "$f" >&2; done
        rm -rf "$out" "$errs"
        return 1
    fi
    "$python" - "$out" <<'PY'
import json, statistics, sys
rates = []
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    i = line.find("\x1erdk1 ")
    if i < 0:
        continue
    ev = json.loads(line[i + 15:])
    if ev.get("t") == "step" and ev["step"] > 5:
        rates.append(ev["samples_per_s"])
print(f"{statistics.median(rates):.1f}")
PY
    rm -rf "$out" "$errs"
}

python_rate() {
    local err; err=$(mktemp)
    local rate
    rate=$("$python" -m torch.distributed.run --nproc-per-node "$nproc" --master-addr 127.0.0.1 \
        --master-port "$(free_port)" "$here/python_ddp.py" --backend "$backend" "$@" 2>"$err" |
        awk '/^samples_per_s/ {print $2}') || true
    if [[ -z $rate ]]; then
        echo "run.sh: python_ddp.py $* failed:" >&2
        tail -n 15 "$err" >&2
        rm -f "$err"
        return 1
    fi
    rm -f "$err"
    echo "$rate"
}

big=(--task mlp --mlp-width 2048 --mlp-depth 7 --batch-size 32 --dataset-size 1024)
tiny=(--task linear --batch-size 20 --dataset-size 4096)
repeat=${REPEAT:-3}

# Median of `repeat` alternating runs, so that drift in the machine's speed hits both sides alike.
best() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "rankdeck-worker vs PyTorch DDP, $nproc ranks, $backend, OMP_NUM_THREADS=$OMP_NUM_THREADS, median of $repeat"
wb=() wbn=() wbu=() pb=() wt=() wtu=() pt=()
for ((i = 0; i < repeat; i++)); do
    wb+=("$(worker_rate "${big[@]}" --steps "$big_steps")")
    pb+=("$(python_rate "${big[@]}" --steps "$big_steps")")
    wbn+=("$(worker_rate "${big[@]}" --steps "$big_steps" --no-overlap)")
    # Unbound (--cpu-affinity off), as torchrun leaves Python's ranks: how much the default
    # CPU binding contributes.
    wbu+=("$(worker_rate "${big[@]}" --steps "$big_steps" --cpu-affinity off)")
    wt+=("$(worker_rate "${tiny[@]}" --steps "$tiny_steps")")
    pt+=("$(python_rate "${tiny[@]}" --steps "$tiny_steps")")
    wtu+=("$(worker_rate "${tiny[@]}" --steps "$tiny_steps" --cpu-affinity off)")
    echo "  run $((i + 1)): mlp worker ${wb[-1]} python ${pb[-1]} no-overlap ${wbn[-1]} unbound ${wbu[-1]}; linear worker ${wt[-1]} python ${pt[-1]} unbound ${wtu[-1]}"
done
w_big=$(best "${wb[@]}") p_big=$(best "${pb[@]}") w_big_noov=$(best "${wbn[@]}")
w_tiny=$(best "${wt[@]}") p_tiny=$(best "${pt[@]}")
w_big_unb=$(best "${wbu[@]}") w_tiny_unb=$(best "${wtu[@]}")
ratio() { "$python" -c "print(f'{$1/$2:.2f}')"; }
printf '%-34s %14s %14s %8s\n' "case" "worker" "python DDP" "ratio"
printf '%-34s %14s %14s %8s\n' "mlp 25.3M params (samples/s)" "$w_big" "$p_big" "$(ratio "$w_big" "$p_big")"
printf '%-34s %14s %14s %8s\n' "linear 11 params (samples/s)" "$w_tiny" "$p_tiny" "$(ratio "$w_tiny" "$p_tiny")"
printf '%-34s %14s %14s %8s\n' "mlp overlap vs --no-overlap" "$w_big" "$w_big_noov" "$(ratio "$w_big" "$w_big_noov")"
printf '%-34s %14s %14s %8s\n' "mlp unbound (samples/s)" "$w_big_unb" "$p_big" "$(ratio "$w_big_unb" "$p_big")"
printf '%-34s %14s %14s %8s\n' "linear unbound (samples/s)" "$w_tiny_unb" "$p_tiny" "$(ratio "$w_tiny_unb" "$p_tiny")"
