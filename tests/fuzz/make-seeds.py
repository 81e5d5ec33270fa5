#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Writes the seed corpora of tests/fuzz/corpus/ from the real samples in the tree.

Each target's input starts with its control bytes (see the comment atop fuzz_<name>.cpp); the
rest is real: the CPython tracebacks and faulthandler dumps of tests/core/stream/data, event
payloads as the worker and the supervisor write them (docs/protocol.md), profiles as
ProfileStore writes them. Files are named after their source; crash-* files are inputs that
once broke a target and are never rewritten here. Run it again after adding a sample.
"""
import json
import pathlib
import zlib

here = pathlib.Path(__file__).resolve().parent
root = here.parent.parent
corpus = here / "corpus"
data = root / "tests/core/stream/data"


def put(target, name, content):
    folder = corpus / target
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(content)


def wire(payload):
    body = json.dumps(payload, separators=(",", ":")).encode()
    return b"\x1erdk1 %08x %s" % (zlib.crc32(body), body)


# Events as a worker run and a supervised Python program wrote them (rank-N.events.jsonl of
# real runs), and the kinds only failures produce, with the fields docs/protocol.md lists.
events = [
    {"t": "hello", "ts": 1796129003732168, "rank": 0, "proto": 1, "host": "vm", "pid": 16848,
     "local_rank": 0, "world_size": 2, "task": "python", "worker": "0.1.0", "supervised": True},
    {"t": "store", "ts": 1796129003732217, "rank": 0, "port": 35233},
    {"t": "rendezvous", "ts": 1796130873554315, "rank": 0, "duration_ms": 226.193601,
     "backend": "gloo", "world_size": 2},
    {"t": "step", "ts": 1796130873639477, "rank": 0, "step": 1, "epoch": 0, "loss": 4.52492046,
     "lr": 0.003, "samples_per_s": 1319.44216, "step_ms": 48.505347, "comm_wait_ms": 4.129065},
    {"t": "step", "ts": 1796130873639478, "rank": 1, "step": 2, "loss": "nan", "lr": "inf"},
    {"t": "heartbeat", "ts": 1796129004232842, "rank": 0},
    {"t": "checkpoint", "ts": 1796129004232843, "rank": 0, "step": 10, "path": "/tmp/c.pt"},
    {"t": "stopping", "ts": 1796129004232844, "rank": 0, "reason": "stop requested"},
    {"t": "finished", "ts": 1796129005283604, "rank": 0, "exit_code": 0},
    {"t": "error", "ts": 1796129005283605, "rank": 1, "exit_code": 1, "exception": "ValueError",
     "msg": "bad shape", "python": (data / "simple.txt").read_text()[:2000],
     "error_file": "/tmp/error-rank1.json"},
    {"t": "crash", "ts": 1796129005283606, "rank": 1, "kind": "signal", "signal": 11,
     "signal_name": "SIGSEGV", "msg": "Segmentation fault", "thread": "main", "pid": 4242,
     "stack": "#0 0x7f00 in crash() at worker/crash/faultinjection.cpp:41\n#1 0x7f01 in main()",
     "own_frame": 0, "build_id": "abcdef", "path": "/tmp/crash-rank1.txt", "oom": False},
    {"t": "stacks", "ts": 1796129005283607, "rank": 0, "reason": "dump-stacks", "pid": 4243,
     "stack": "thread 1 (main):\n#0 0x1 in poll()\n", "path": "/tmp/stacks-rank0.txt",
     "python": (data / "segv_threads.txt").read_text()[:2000]},
]
for i, event in enumerate(events):
    body = json.dumps(event, separators=(",", ":")).encode()
    rank = event["rank"]
    # sealed (mode 1): prefix \0 json, checksum added by the target
    put("eventparser", f"sealed-{i:02}-{event['t']}", bytes([1, rank + 1]) + b"\0" + body)
    put("eventparser", f"sealed-prefix-{i:02}-{event['t']}",
        bytes([3, rank + 1]) + b"user text printed without a newline \0" + body)
    # plain (mode 0): whole lines as on a rank's stdout, events between log lines
    put("eventparser", f"plain-{i:02}-{event['t']}",
        bytes([8, rank + 1]) + b"epoch 1 loss=0.5\n" + wire(event) + b"\r\nnext line\n")
put("eventparser", "plain-forged-then-real",
    bytes([0, 1]) + b"abc \x1erdk1 deadbeef {fake}" + wire(events[3]) + b"\n")
put("eventparser", "plain-wrong-rank", bytes([0, 3]) + wire(events[3]) + b"\n")

# Line splitter: progress bars, colours, CRLF, UTF-8 cut anywhere, NUL, a long line.
samples = {
    "progress": b"epoch 1:  10%|#         | 1/10\r epoch 1:  20%|##        | 2/10\r\n",
    "ansi": b"\x1b[32mINFO\x1b[0m ready\n\x1b]0;title\x07text\n\x1b[",
    "utf8": "loss=0.5 \u2014 \u00e9t\u00e9 \U0001f600\n".encode() + b"\xe2\x82\n\xff\xfe\n",
    "controls": b"a\0b\x01c\x7f\td\n\n\n",
    "long": b"x" * 3000 + b"\n" + b"y" * 100,
    "traceback": (data / "simple.txt").read_bytes(),
    "color-traceback": (data / "simple_py313_color.txt").read_bytes(),
}
for name, content in samples.items():
    put("linesplitter", name, bytes([4, 40]) + content)

# logs --follow: the same samples, as the file grows (line limit 16 + 4 * byte, display bytes,
# raw), plus what a hostile rank writes: OSC 52, C1, bidi overrides, a line longer than the limit
# that redraws itself, and a nested progress bar that moves the cursor up.
follow = dict(samples)
follow["hostile"] = ("\x1b]52;c;cm0gLXJmIH4K\x07clip \x1b]0;owned\x07 \u009b2J "
                     "\u202etxt.exe\u202c \u2066iso\n").encode() + b"\x1bP1$qm\x1b\\dcs\n"
follow["long-redraw"] = b"z" * 700 + b"\r" + b"w" * 700 + b"\x1b[A\n" + b"q" * 2000 + b"\r\n"
follow["nested-bar"] = b"\rValidation 25%|##  |\x1b[A\nmain 10%|#  |\n"
for name, content in follow.items():
    put("logfollower", name, bytes([60, 40, 0]) + content)
    put("logfollower", name + "-raw", bytes([60, 40, 1]) + content)

# Python failures: every real sample, as rank 0's and (split byte) partly rank 1's stderr.
for sample in sorted(data.glob("*.txt")):
    put("pythontraceback", sample.stem, b"\xaa" + sample.read_bytes())
put("pythontraceback", "elastic_error", b"\x00" + (data / "elastic_error.json").read_bytes())
put("pythontraceback", "elastic_plain",
    b"\x00" + json.dumps({"message": "RuntimeError: boom", "timestamp": 1796129005}).encode())

# Profiles: as ProfileStore writes them (a real run record's profile.toml) and as people do.
profiles = {
    "local": (root / "tests/fuzz/seeds/profile-local.toml").read_bytes()
    if (root / "tests/fuzz/seeds/profile-local.toml").exists() else None,
    "ssh": b"""# cluster
name = "gpu"
transport = "ssh"
schema_version = 1
backend = "nccl"
rendezvous_address = "10.0.0.5"
worker_directory = "~/.cache/rankdeck/worker"
libtorch_path = "python"
metrics = ["tok=(\\\\d+)", "(\\\\d+) it/s"]

[environment]
NCCL_DEBUG = "INFO"
OMP_NUM_THREADS = "4"

[timeouts]
connect = 10
rendezvous = 60
heartbeat = 10
collective = 300

[[nodes]]
host = "node1"
port = 2222
user = "alice"
identity_file = "~/.ssh/id_ed25519"
ranks_per_node = 4
gpus_per_node = 4

[[nodes]]
host = "10.0.0.6"
ranks_per_node = 4
""",
    "broken": b"name = \"x\"\n[[nodes]]\nhost = 'a'\nport = \"22\"\n[timeouts]\nheartbeat = \"soon\"\n",
    "inline": b"name='y'\ntransport='ssh'\nnodes=[{host='a',port=22},{host='b',ranks_per_node=2}]\n",
}
for name, content in profiles.items():
    if content:
        put("profile", name, content)

# Metric patterns: [flags] specs \0 lines, the lines real programs print.
lines = (b"epoch 1 step 10 loss=0.3100 lr=1e-3\n"
         b"{'loss': 0.25, 'learning_rate': 5e-05, 'epoch': 0.5}\n"
         b"iter 120: val_loss 2.31, acc 0.91, ppl 12.5\n"
         b"Step 3/100 | Loss: 1.234 | tok 5120 | 48.2 it/s\n"
         b"\"loss\": NaN, \"step\": 7\n")
put("metricpatterns", "defaults", b"\x00\x00" + lines)
put("metricpatterns", "user", b"\x04tok=tok (\\d+)\nspeed=([\\d.]+) it/s\nbad=(\n\x00" + lines)
put("metricpatterns", "reported", b"\x02\x00" + lines)
# Progress bars as tqdm, Lightning and Transformers drew them (tests/core/stream/data/progress,
# the two pipes' bytes one after the other): fed through a RankStream (flag 8).
for sample in sorted((data / "progress").glob("*.chunks")):
    raw, at = sample.read_bytes(), 0
    streams = {b"O": b"", b"E": b""}
    while at < len(raw):
        nl = raw.index(b"\n", at)
        n = int(raw[at + 2:nl])
        streams[raw[at:at + 1]] += raw[nl + 1:nl + 1 + n]
        at = nl + 1 + n + 1
    put("metricpatterns", "stream-" + sample.stem,
        b"\x08\x00" + (streams[b"E"] + streams[b"O"])[:24000])

# TensorBoard event files as SummaryWriter wrote them (tests/core/stream/data/*.tfevents: scalars,
# add_scalars), whole, in chunks, cut inside the last record, with one byte flipped.
for sample in sorted(data.glob("*.tfevents")):
    content = sample.read_bytes()
    put("tfrecord", sample.stem, b"\x00" + content)
    put("tfrecord", sample.stem + "-chunks-7", b"\x07" + content)
    put("tfrecord", sample.stem + "-cut", b"\x05" + content[:len(content) - 9])
    flipped = bytearray(content)
    flipped[len(content) // 2] ^= 0x40
    put("tfrecord", sample.stem + "-flipped", b"\x03" + bytes(flipped))

# ssh_config: the forms SshSession reads (Host patterns, Match, ProxyJump, keepalive).
configs = {
    "jump": b"Host node1\n  HostName 10.0.0.5\n  User alice\n  Port 2222\n  ProxyJump bastion,bob@gw:2200\n  ServerAliveInterval 15\n",
    "patterns": b"Host !gpu-00* gpu-*\n  ServerAliveInterval=30\nMatch all\nHost *\n  ServerAliveInterval 60\n",
    "ipv6-jump": b"Host *\n  ProxyJump alice@[fe80::1]:22\n",
    "libssh-command": b"ssh -l alice -p 2222 -J b,c -W '[%h]:%p' a\n",
    "bad": b"Host node1\nServerAliveInterval soon\nHostName\n=\n",
}
for i, (name, content) in enumerate(configs.items()):
    put("sshconfig", name, bytes([i]) + content)

# Slurm: [queue position] then what the cluster prints. The poll command's framed reply as the
# local /bin/sh prints it (tst_slurmscript), Slurm 22.05's `scontrol -o show job` lines for each
# state the transport tells apart, `sacct -n -P -X -o State,ExitCode,Reason`, `sbatch --parsable`.
scontrol = {
    "pending": b"JobId=12 JobName=r1 UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 "
               b"Nice=0 Account=(null) QOS=normal JobState=PENDING Reason=Resources Dependency=(null) "
               b"Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 "
               b"TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-01T15:02:11 Partition=debug "
               b"NodeList=(null) NumNodes=2-2 NumCPUs=2 NumTasks=2 CPUs/Task=1 "
               b"Command=/shared/runs/r1/job.a1.sbatch WorkDir=/shared/runs/r1 "
               b"StdOut=/shared/runs/r1/job.a1.out Power=",
    "running": b"JobId=12 JobName=r1 JobState=RUNNING Reason=None ExitCode=0:0 TimeLimit=00:10:00 "
               b"NodeList=n[1-2] BatchHost=n1 NumNodes=2 StdOut=/shared/runs/r1/job.a1.out",
    "cancelled": b"JobId=12 JobState=CANCELLED Reason=None ExitCode=0:15 NodeList=n[1-2]",
    "timeout": b"JobId=12 JobState=TIMEOUT Reason=TimeLimit TimeLimit=00:01:00 ExitCode=0:0",
    "node-fail": b"JobId=12 JobState=NODE_FAIL Reason=NodeDown NodeList=n2",
    "oom": b"JobId=12 JobState=OUT_OF_MEMORY Reason=OutOfMemory ExitCode=0:125",
    "requeued": b"JobId=12 JobState=PENDING Reason=BeginTime Restarts=1 ExitCode=0:0",
    "failed": b"JobId=12 JobState=FAILED Reason=NonZeroExitCode ExitCode=139:0",
    "forgotten": b"slurm_load_jobs error: Invalid job id specified",
}
for name, line in scontrol.items():
    put("slurm", f"scontrol-{name}", b"\x02" + line + b"\n")
put("slurm", "sacct", b"\x00CANCELLED by 0|0:15|None\nCOMPLETED|0:0|None\nFAILED|1:0|NonZeroExitCode\n")
put("slurm", "sbatch-parsable", b"\x00" + b"4242\n")
put("slurm", "sbatch-parsable-cluster", b"\x00" + b"4242;cluster1\n")
put("slurm", "sbatch-banner", b"\x00" + b"Welcome to the cluster\n4242\n")
put("slurm", "poll",
    b"\x01@job\n" + scontrol["running"] + b" \n@queue 9 10 12 \n"
    b"@rank rank0.a1 4242 n1 127.0.0.1|\n@data rank0.a1 out 12\nhello\nworld\n"
    b"@data rank0.a1 err 3\ne1\n@rank rank1.a1 |139\n@data rank1.a1 out 1\nx"
    b"@data rank1.a1 err 0\n@rank rank2.a1 |\n@data rank2.a1 out 0\n@data rank2.a1 err 0\n@end\n")
put("slurm", "poll-pending",
    b"\x03@job\n" + scontrol["pending"] + b" \n@queue 9 10 12 \n@rank rank0.a1 |\n"
    b"@data rank0.a1 out 0\n@data rank0.a1 err 0\n@end\n")
put("slurm", "poll-cut", b"\x00@job\nJobId=7\n@rank rank0.a1 1|\n@data rank0.a1 out 10\nab")

# Flight-recorder dumps (tests/core/diagnosis/data/fr, torch 2.14.1 + Gloo): each rank's file as it is,
# up to 3 ranks of one case joined by 0x1e (one collective verdict), one cut short.
fr = root / "tests/core/diagnosis/data/fr"
for case in sorted(p for p in fr.iterdir() if p.is_dir() and p.name != "src"):
    dumps = sorted(case.glob("rank_*.json"))
    for d in dumps:
        put("flightrecorder", f"{case.name}-{d.stem}", d.read_bytes())
    put("flightrecorder", f"{case.name}-together", b"\x1e".join(d.read_bytes() for d in dumps[-3:]))
cut = (fr / "uneven/rank_1.json").read_bytes()
put("flightrecorder", "uneven-rank_0-and-cut-rank_1",
    (fr / "uneven/rank_0.json").read_bytes() + b"\x1e" + cut[: len(cut) // 2])
