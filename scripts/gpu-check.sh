#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# On a machine with CUDA GPUs: build rankdeck-worker against this machine's torch, run a 1-rank
# NCCL training run (mlp and charlm, bf16 autocast), then the DDP benchmark on the GPUs, which
# measures overlap_speedup with NCCL (bucketed all-reduce from the gradient hooks vs all buckets
# after backward): on the 2-core CPU machine it has no spare core to overlap into, on GPUs the
# all-reduce runs on NCCL's own stream while backward goes on. With 2 GPUs or more, last, the
# flight recorder over NCCL: a user's program under rankdeck-supervisor answers
# dump-flight-recorder through the startup hook (_dump_nccl_trace_json merged into the JSON),
# torch's debug pipe is poked and must make torch write its pickle into the run directory, a
# rank holding the GIL is asked through the pipe, and rankdeck-worker dumps its NCCL recorder;
# torch's analyser must name the missing rank. Self-checking: any failed check fails the script.
# Usage: scripts/gpu-check.sh [PYTHON_WITH_TORCH]   (default: python3)
#        scripts/gpu-check.sh --cpu-dry-run [PYTHON]  checks this script's benchmark part on a
#        machine without a GPU (2 CPU ranks over Gloo, few steps, an existing build); its numbers
#        say nothing about GPUs. It also runs the flight-recorder checks over Gloo, which
#        exercises their driver (not NCCL's pipe).
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

# torch's flight recorder through RankDeck (see the header). Gloo runs the same checks, without
# the pipe (NCCL only).
flight_recorder() {
    local backend=$1
    "$python" - "$build/bin/rankdeck-supervisor" "$build/bin/rankdeck-worker" "$backend" <<'PY'
import base64, json, os, pickle, select, subprocess, sys, tempfile, time

supervisor, worker, backend = sys.argv[1], sys.argv[2], sys.argv[3]
python = sys.executable
PROGRAM = r'''
import ctypes, datetime, os, sys, time
import torch, torch.distributed as dist
backend, mode = sys.argv[1], sys.argv[2]
dist.init_process_group(backend, timeout=datetime.timedelta(seconds=600))
rank = dist.get_rank()
dev = torch.device("cuda", int(os.environ["LOCAL_RANK"])) if backend == "nccl" else torch.device("cpu")
if backend == "nccl":
    torch.cuda.set_device(dev)
t = torch.ones(21, device=dev)
for _ in range(3):
    dist.all_reduce(t)
if backend == "nccl":
    torch.cuda.synchronize()
if mode != "gil" or rank == 0:
    print("parting %d" % rank, flush=True)
if rank == 0:
    dist.all_reduce(t)  # rank 1 never joins: NCCL enqueues and returns, Gloo blocks here
elif mode == "gil":
    # The GIL held in native code (PyDLL keeps it): the hook cannot answer once this prints.
    ctypes.PyDLL(None).system(b"echo parting %d; exec sleep 600" % rank)
time.sleep(600)
'''
failures = []


def check(ok, what):
    print(("   ok    " if ok else "   FAIL  ") + what, flush=True)
    if not ok:
        failures.append(what)


class Rank:
    def __init__(self, args, rank, port, env=None):
        e = dict(os.environ, RANK=str(rank), WORLD_SIZE="2", LOCAL_RANK=str(rank),
                 LOCAL_WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        for name in ("TORCH_FR_BUFFER_SIZE", "TORCH_NCCL_TRACE_BUFFER_SIZE", "RANKDECK_FLIGHT_RECORDER"):
            e.pop(name, None)
        e.update(env or {})
        self.p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=e)
        self.buf, self.events, self.log = b"", [], []

    def pump(self, timeout):
        r, _, _ = select.select([self.p.stdout], [], [], timeout)
        if not r:
            return
        chunk = os.read(self.p.stdout.fileno(), 1 << 16)
        self.buf += chunk
        while b"\n" in self.buf:
            line, self.buf = self.buf.split(b"\n", 1)
            i = line.find(b"\x1erdk1 ")
            if i >= 0:
                self.events.append(json.loads(line[i + 15:]))
            else:
                self.log.append(line.decode(errors="replace"))

    def wait(self, ready, seconds=300):
        deadline = time.time() + seconds
        while not ready() and time.time() < deadline and self.p.poll() is None:
            self.pump(0.2)
        return ready()

    def send(self, line):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()

    def answer(self, rid):
        files, end = {}, None
        for e in self.events:
            if e.get("t") != "frdump" or e.get("id") != rid:
                continue
            if e.get("end"):
                end = e
                continue
            data = base64.b64decode(e["data"])
            f = files.setdefault(e["file"], bytearray(e["size"]))
            f[e["offset"]:e["offset"] + len(data)] = data
        return files, end

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(20)
        except Exception:
            self.p.kill()


def start_pair(make_args, env=None):
    r0 = Rank(make_args(0), 0, 0, env)
    if not r0.wait(lambda: any(e.get("t") == "store" for e in r0.events), 120):
        sys.exit("gpu-check: rank 0 reported no store port")
    port = next(e["port"] for e in r0.events if e.get("t") == "store")
    return [r0, Rank(make_args(1), 1, port, env)]


def entries(files):
    return json.loads(bytes(files["json"]))["entries"] if "json" in files else []


def analyse(pickles):
    d = tempfile.mkdtemp()
    for r, data in enumerate(pickles):
        open(os.path.join(d, "rank_%d" % r), "wb").write(data)
    return subprocess.run([python, "-m", "torch.distributed.flight_recorder.fr_trace", d,
                           "--prefix", "rank_"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True).stdout


prefix = backend + ":"
with tempfile.TemporaryDirectory() as tmp:
    script = os.path.join(tmp, "parting.py")
    open(script, "w").write(PROGRAM)

    print("== flight recorder, %s, user's program under rankdeck-supervisor: the hook" % backend)
    run = os.path.join(tmp, "hook")
    os.mkdir(run)
    ranks = start_pair(lambda r: [supervisor, "--control-stdin", "--run-dir", run, "--",
                                  python, script, backend, "sleep"])
    for r in ranks:
        check(r.wait(lambda: any(l.startswith("parting") for l in r.log)), "rank reached the parting")
    time.sleep(2)  # rank 0's last all_reduce is enqueued by now
    for r in ranks:
        r.send("dump-flight-recorder 7")
    answers = []
    for n, r in enumerate(ranks):
        r.wait(lambda: r.answer(7)[1] is not None, 30)
        files, end = r.answer(7)
        answers.append(files)
        check(end is not None and not end.get("msg"), "rank %d answered with a dump (%s)" % (n, end))
        names = {e["profiling_name"] for e in entries(files)}
        check(any(x.startswith(prefix) for x in names), "rank %d: %s entries (%s)" % (n, prefix, names))
    last = [max((e["collective_seq_id"] for e in entries(f) if e["profiling_name"].startswith(prefix)),
                default=0) for f in answers]
    check(last == [4, 3], "rank 0 entered collective 4, rank 1 did not (last %s)" % last)
    if all("pickle" in f for f in answers):
        report = analyse([bytes(f["pickle"]) for f in answers])
        check("missing ranks: {1}" in report, "torch's analyser names rank 1 missing")
    if backend == "nccl":
        # torch's debug pipe, poked by hand while the GIL is free: the watchdog's monitor
        # writes its pickle into the run directory.
        pipe = os.path.join(run, "nccl-pipe-rank0.pipe")
        dump = os.path.join(run, "nccl-trace-rank0")
        check(os.path.exists(pipe) and not os.path.isfile(pipe), "debug pipe %s exists" % pipe)
        if os.path.exists(pipe):
            fd = os.open(pipe, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"1\n")
            os.close(fd)
            deadline = time.time() + 15
            data = None
            while time.time() < deadline and data is None:
                time.sleep(0.5)
                try:
                    data = pickle.load(open(dump, "rb"))
                except Exception:
                    pass
            check(data is not None and any(e["profiling_name"].startswith(prefix) for e in data["entries"]),
                  "the pipe made torch write %s with NCCL entries" % dump)
    for r in ranks:
        r.close()

    print("== flight recorder, %s: rank 1 holds the GIL" % backend)
    run = os.path.join(tmp, "gil")
    os.mkdir(run)
    ranks = start_pair(lambda r: [supervisor, "--control-stdin", "--run-dir", run, "--",
                                  python, script, backend, "gil"])
    for r in ranks:
        r.wait(lambda: any(l.startswith("parting") for l in r.log))
    time.sleep(2)
    r1 = ranks[1]
    before = len(r1.events)
    r1.send("dump-flight-recorder 8")
    r1.wait(lambda: r1.answer(8)[1] is not None, 30)
    files, end = r1.answer(8)
    beats = sum(e.get("t") == "heartbeat" for e in r1.events[before:])
    check(end is not None, "one end event: %s" % (end or {}).get("msg"))
    check(beats >= 2, "the supervisor's loop went on meanwhile (%d heartbeats)" % beats)
    if backend == "nccl" and "pickle" in files:
        data = pickle.loads(bytes(files["pickle"]))
        check(any(e["profiling_name"].startswith(prefix) for e in data["entries"]),
              "torch's pickle through the pipe has NCCL entries")
        print("   note  the pipe answered although the GIL was held")
    else:
        print("   note  no pipe dump: %s" % (end or {}).get("msg"))
    for r in ranks:
        r.close()

    print("== flight recorder, %s, rankdeck-worker (rank 1 hangs at step 5)" % backend)
    ranks = start_pair(lambda r: [worker, "--control-stdin", "--backend", backend, "--steps", "100",
                                  "--fault", "hang@5", "--fault-rank", "1"])
    for r in ranks:
        r.wait(lambda: sum(e.get("t") == "step" for e in r.events) >= 5, 300)
    time.sleep(3)
    answers = []
    for n, r in enumerate(ranks):
        r.send("dump-flight-recorder 9")
        r.wait(lambda: r.answer(9)[1] is not None, 30)
        files, end = r.answer(9)
        answers.append(files)
        check(end is not None and not end.get("msg"), "worker rank %d answered with a dump" % n)
        check(any(e["profiling_name"].startswith(prefix) for e in entries(files)),
              "worker rank %d: %s entries" % (n, prefix))
        if "json" in files:
            config = json.loads(bytes(files["json"]))["pg_config"]
            check(config.get("0", {}).get("ranks") == "[0, 1]", "worker rank %d: pg_config %s" % (n, config))
    if all("pickle" in f for f in answers):
        report = analyse([bytes(f["pickle"]) for f in answers])
        check("missing ranks: {1}" in report, "torch's analyser names worker rank 1 missing")
    for r in ranks:
        r.close()

sys.exit(1 if failures else 0)
PY
}

if ((dry_run)); then
    [[ -x $build/bin/rankdeck-worker ]] || { echo "gpu-check: no $build/bin/rankdeck-worker (BUILD_DIR=...)" >&2; exit 2; }
    REPEAT=${REPEAT:-1} benchmark 2 gloo 8 50
    [[ -x $build/bin/rankdeck-supervisor ]] && flight_recorder gloo
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
cmake --build "$build" --target rankdeck-worker rankdeck-supervisor -j"$(nproc)"
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
if ((gpus >= 2)); then
    flight_recorder nccl
else
    echo "flight recorder (NCCL): not run: needs 2 GPUs (one NCCL rank per GPU); this machine has $gpus"
fi
