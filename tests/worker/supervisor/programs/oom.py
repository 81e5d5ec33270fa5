# SPDX-License-Identifier: GPL-3.0-or-later
# Allocates (and touches) far more memory than its cgroup allows: the OOM killer's SIGKILL.
chunks = []
for _ in range(64):
    chunks.append(bytearray(16 << 20))
print("survived", flush=True)
