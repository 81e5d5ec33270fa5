# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks rankdeck-worker's DDP results against plain single-process PyTorch.

Given the per-rank --save-state files of one run, it verifies that every rank holds bitwise the
same parameters, then retrains the model in one process on the concatenated global batch (the
same DistributedSampler indices, the same initial parameters, optimizer and schedule) and checks
that the worker's parameters equal that result to a relative 1e-5 (per tensor, in norm).

Prints one JSON line {"ok": bool, "message": str, "max_rel": float}; exits 0 when ok.
"""
import argparse
import json
import math
import sys

import torch


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--task", required=True)
    p.add_argument("--world", type=int, required=True)
    p.add_argument("--steps", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--weight-decay", type=float, default=None)
    p.add_argument("--schedule", default="constant")
    p.add_argument("--warmup-steps", type=int, default=0)
    p.add_argument("--clip-grad-norm", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--shuffle", action="store_true")
    p.add_argument("--accum-steps", type=int, default=1)
    p.add_argument("--dataset-size", type=int, default=0)
    p.add_argument("--mlp-width", type=int, default=64)
    p.add_argument("--mlp-depth", type=int, default=2)
    p.add_argument("--model")
    p.add_argument("--data")
    p.add_argument("--loss", default="mse")
    p.add_argument("--init", required=True, help="initial parameters (worker --steps 0 --save-state)")
    p.add_argument("--states", nargs="+", required=True, help="final --save-state of every rank")
    return p.parse_args()


def sampler_indices(n, world, rank, epoch, shuffle, seed):
    # torch.utils.data.DistributedSampler(drop_last=False), written out.
    if shuffle:
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        indices = torch.randperm(n, generator=g).tolist()
    else:
        indices = list(range(n))
    per_rank = math.ceil(n / world)
    total = per_rank * world
    padding = total - len(indices)
    if padding <= len(indices):
        indices += indices[:padding]
    else:
        indices += (indices * math.ceil(padding / len(indices)))[:padding]
    return indices[rank:total:world]


def build(a):
    if a.task == "linear":
        g = torch.Generator().manual_seed(a.seed)
        x = torch.randn(a.dataset_size, 10, generator=g)
        model = torch.nn.Linear(10, 1)
        return model, x, None, lambda out, y: out.sum(), "sum"
    if a.task == "mlp":
        g = torch.Generator().manual_seed(a.seed)
        x = torch.randn(a.dataset_size, 64, generator=g)
        teacher = torch.randn(64, 8, generator=g) / math.sqrt(64)
        y = torch.sin(x @ teacher)
        layers = [torch.nn.Linear(64, a.mlp_width), torch.nn.ReLU()]
        for _ in range(1, a.mlp_depth):
            layers += [torch.nn.Linear(a.mlp_width, a.mlp_width), torch.nn.ReLU()]
        layers.append(torch.nn.Linear(a.mlp_width, 8))
        return torch.nn.Sequential(*layers), x, y, torch.nn.functional.mse_loss, "mean"
    if a.task == "script":
        model = torch.jit.load(a.model)
        data = torch.load(a.data)
        if a.loss == "cross-entropy":
            fn = lambda out, y: torch.nn.functional.cross_entropy(out.float(), y.long())
        else:
            fn = lambda out, y: torch.nn.functional.mse_loss(out.float(), y.float())
        return model, data["x"], data["y"], fn, "mean"
    raise SystemExit("unsupported task " + a.task)


def lr_at(a, step):
    if step < a.warmup_steps:
        return a.lr * (step + 1) / a.warmup_steps
    if a.schedule == "cosine":
        span = max(1, a.steps - a.warmup_steps)
        progress = min(1.0, (step - a.warmup_steps) / span)
        return a.lr * 0.5 * (1.0 + math.cos(math.pi * progress))
    return a.lr


def main():
    a = parse()
    torch.manual_seed(0)
    states = [torch.load(s) for s in a.states]
    for r, s in enumerate(states[1:], start=1):
        for name, t in states[0].items():
            if not torch.equal(t, s[name]):
                return report(False, f"rank {r} differs from rank 0 in {name}", float("nan"))

    model, x, y, loss_fn, reduction = build(a)
    n = x.shape[0]
    init = torch.load(a.init)
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.copy_(init[name])
    params = [p for _, p in model.named_parameters()]
    if a.optimizer == "adamw":
        wd = 0.01 if a.weight_decay is None else a.weight_decay
        opt = torch.optim.AdamW(params, lr=a.lr, weight_decay=wd)
    else:
        wd = 0.0 if a.weight_decay is None else a.weight_decay
        opt = torch.optim.SGD(params, lr=a.lr, momentum=a.momentum, weight_decay=wd)

    per_rank = math.ceil(n / a.world)
    batches_per_epoch = per_rank // a.batch_size
    cache = {}
    for step in range(a.steps):
        for group in opt.param_groups:
            group["lr"] = lr_at(a, step)
        chunks = []
        for micro in range(a.accum_steps):
            global_batch = step * a.accum_steps + micro
            epoch, b = divmod(global_batch, batches_per_epoch)
            for r in range(a.world):
                key = (epoch, r)
                if key not in cache:
                    cache[key] = sampler_indices(n, a.world, r, epoch, a.shuffle, a.seed)
                chunks.append(cache[key][b * a.batch_size:(b + 1) * a.batch_size])
        idx = torch.tensor([i for c in chunks for i in c])
        out = model(x[idx])
        if reduction == "sum":
            # DDP averages the ranks' gradients of per-rank sums: the global sum over W*A chunks.
            loss = loss_fn(out, None) / len(chunks)
        else:
            loss = loss_fn(out, y[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if a.clip_grad_norm > 0:
            torch.nn.utils.clip_grad_norm_(params, a.clip_grad_norm)
        opt.step()

    worst = 0.0
    worst_name = ""
    for name, p in model.named_parameters():
        # Relative difference in norm: AdamW turns rounding-level gradient differences of
        # near-zero gradients into lr-sized steps of single elements, so an element-wise bound
        # would measure Adam, not DDP.
        got = states[0][name].double()
        want = p.detach().double()
        rel = ((got - want).norm() / want.norm().clamp_min(1e-12)).item()
        if rel > worst:
            worst, worst_name = rel, name
    if worst > 1e-5:
        return report(False, f"{worst_name} differs from single-process training by relative {worst:.3g}", worst)
    return report(True, f"{len(states)} ranks identical; single-process max relative difference {worst:.3g}", worst)


def report(ok, message, max_rel):
    print(json.dumps({"ok": ok, "message": message, "max_rel": max_rel}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
