import sys, time, os, datetime
from torch.distributed import TCPStore
if sys.argv[1] == "server":
    s = TCPStore("127.0.0.1", 29544, 2, True, timeout=datetime.timedelta(seconds=5))
    time.sleep(1.0)
    os._exit(0)
else:
    s = TCPStore("127.0.0.1", 29544, 2, False, timeout=datetime.timedelta(seconds=5))
    time.sleep(1.5)
    s.set("k", "v")
    s.get("missing")
# SPDX-License-Identifier: GPL-3.0-or-later
