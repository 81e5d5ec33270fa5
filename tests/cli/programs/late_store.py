# SPDX-License-Identifier: GPL-3.0-or-later
# Rank 0 opens its "store" on MASTER_PORT only after a second, as a torch program does after
# importing torch; the other ranks connect at once. Through the supervisor's store proxy their
# first connect succeeds (no "connection refused" to back off from), and bytes go both ways.
import os
import socket
import time

rank = int(os.environ["RANK"])
port = int(os.environ["MASTER_PORT"])
if rank == 0:
    time.sleep(1.0)
    server = socket.create_server(("", port), reuse_port=False)
    for _ in range(int(os.environ["WORLD_SIZE"]) - 1):
        conn, _ = server.accept()
        data = conn.recv(16)
        conn.sendall(data.replace(b"ping", b"pong"))
        conn.close()
    print("store served", flush=True)
else:
    s = socket.create_connection((os.environ["MASTER_ADDR"], port))
    print("connected on the first try", flush=True)
    s.sendall(b"ping %d" % rank)
    print("store answered", s.recv(16).decode(), flush=True)
