#!/usr/bin/env python3
"""The PyTorch side of tests/bench/bench_mpi.py: chapter 6's GPT trained
with DistributedDataParallel on N processes of this machine (the gloo
backend, over the loopback interface), each with its share of the batch.

    python3 tests/bench/ddp_torch.py --procs 2 --batch 16 --steps 30

The model, the optimiser and the batches are train_torch.py's; DDP
averages the gradients during the backward pass, in buckets (its way of
overlapping the all-reduce with the rest of the backward). Each process
runs on one thread. Rank 0 prints train_torch.py's summary line, with
tokens/s for the whole batch (all processes together), so that one parser
reads it and ./ch6's. Needs PyTorch; the build and the tests never do.
"""
import argparse
import os
import socket
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "reference"))

import torch                                   # noqa: E402
import torch.distributed as dist               # noqa: E402
import torch.multiprocessing as mp             # noqa: E402
import train_torch as tt                       # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, a, port):
    torch.set_num_threads(a.threads)
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=a.procs)
    torch.manual_seed(a.seed)            # the same initial weights ...
    train, _, V = tt.load_data(a.data)
    model = tt.GPT(a, V)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = tt.make_optimizer(model, a)
    torch.manual_seed(a.seed + 1 + rank)  # ... and batches of its own
    B = a.batch // a.procs
    step_s = []
    for it in range(a.steps):
        t0 = time.perf_counter()
        for g in opt.param_groups:
            g["lr"] = tt.lr_at(it, a)
        x, y = tt.get_batch(train, B, a.block)
        _, loss = ddp(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()                  # the all-reduce runs in here
        torch.nn.utils.clip_grad_norm_(model.parameters(), a.grad_clip)
        opt.step()
        loss.item()
        step_s.append(time.perf_counter() - t0)
    if rank == 0:
        skip = 4 if len(step_s) > 8 else 0
        med = statistics.median(sorted(step_s[skip:]))
        print("summary: steps %d, %.2f s training, %.0f tokens/s (median of "
              "steps %d..)\n         val nan, peak memory %.1f MiB"
              % (a.steps, sum(step_s), a.batch * a.block / med, skip + 1,
                 tt.peak_mib()), flush=True)
    dist.destroy_process_group()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--procs", type=int, default=2)
    p.add_argument("--threads", type=int, default=1,
                   help="torch.set_num_threads in each process")
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--embd", type=int, default=128)
    p.add_argument("--block", type=int, default=128)
    p.add_argument("--batch", type=int, default=16,
                   help="the whole batch: each process gets batch/procs")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--seed", type=int, default=1337)
    p.add_argument("--data", default=os.path.join(tt.ROOT, "data",
                                                  "tinyshakespeare.txt"))
    a = p.parse_args()
    if a.procs < 1 or a.batch % a.procs:
        p.error("--batch must split into --procs equal parts")
    # what train_torch.py's model and optimiser read from its own flags
    a.dropout, a.bias, a.positional = 0.0, False, "learned"
    a.lr, a.min_lr, a.warmup, a.decay_steps = 2e-3, 2e-4, 100, a.steps
    a.beta1, a.beta2, a.weight_decay, a.grad_clip = 0.9, 0.99, 0.1, 1.0
    mp.spawn(worker, args=(a, free_port()), nprocs=a.procs, join=True)


if __name__ == "__main__":
    main()
