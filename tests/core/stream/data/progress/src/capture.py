# SPDX-License-Identifier: GPL-3.0-or-later
# Runs a program with its stdout and stderr on two pipes, as the launcher does, and writes
# every chunk read from them in arrival order:  "O <n>\n<n bytes>\n" (stdout) or "E <n>\n…".
#   python capture.py OUT.chunks -- python program.py ARGS…
import os, selectors, subprocess, sys

out_path = sys.argv[1]
cmd = sys.argv[sys.argv.index("--") + 1:]
p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
sel = selectors.DefaultSelector()
sel.register(p.stdout, selectors.EVENT_READ, b"O")
sel.register(p.stderr, selectors.EVENT_READ, b"E")
with open(out_path, "wb") as out:
    open_streams = 2
    while open_streams:
        for key, _ in sel.select():
            data = os.read(key.fileobj.fileno(), 65536)
            if not data:
                sel.unregister(key.fileobj)
                open_streams -= 1
                continue
            out.write(key.data + b" %d\n" % len(data) + data + b"\n")
sys.exit(p.wait())
