import os
from torch.distributed.elastic.multiprocessing.errors import record
@record
def main():
    raise ValueError("bad batch on rank 1")
main()
# SPDX-License-Identifier: GPL-3.0-or-later
