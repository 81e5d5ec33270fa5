# SPDX-License-Identifier: GPL-3.0-or-later
# (h) An extra collective of the loop's own shape on one rank: at step 1 rank 3 all_reduces its
# tensor once more. Gloo cannot tell the calls apart, so the sequences slide by one and match
# until the loop ends; then ranks 0-2 go on with work of their own (park) while rank 3 waits in
# its sixth all_reduce, #6, alone. By numbers ranks 0-2 "never entered" #6; by their call sites
# rank 3 is the odd one: its #3 came from another line.
import torch
import torch.distributed as dist

import frrank

frrank.init()
t = torch.ones(8)
for step in range(5):
    if frrank.RANK == 3 and step == 4:
        frrank.ready()
    dist.all_reduce(t)
    if frrank.RANK == 3 and step == 1:
        dist.all_reduce(t)  # the extra one
frrank.park()
