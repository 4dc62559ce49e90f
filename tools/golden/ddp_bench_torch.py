"""PyTorch's DDP benchmark (pytorch/benchmarks/distributed/ddp/benchmark.py) on one rank:
the peer of //tasks/ddp_bench's "no ddp" and "1M/1G" rows. Its procedure: a
fresh torchvision model seeded by the rank, SGD(lr 0.001, momentum 0.9,
weight decay 1e-4), one torch.rand batch whose targets are all class 1, 5
warm-up then 10 timed iterations (forward, cross-entropy, backward, step,
synchronize), DDP without buffer broadcasts; a warm-up row first. In f32
with PyTorch's TF32 defaults (cuDNN's convolutions on, matmuls off) unless
--tf32=on|off sets both, as ddp_bench --tf32 does for ours. The result
is written in ddp_bench's report format, so that

  tools/report diff torch_ddp.json ours.json

compares PyTorch's rows with ours.

  python3 tools/golden/ddp_bench_torch.py --model resnet50 --batch_size 32 [--tf32 on] --json torch_ddp.json
"""
import argparse
import json
import os
import platform
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
import torchvision

from step_timing import set_tf32

PERCENTILES = [50, 75, 90, 95]


def time_iterations(model_name, batch_size, device, use_ddp, bucket_cap_mb, warmup, iterations):
    torch.manual_seed(dist.get_rank())
    model = torchvision.models.__dict__[model_name]().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), 0.001, momentum=0.9, weight_decay=1e-4)
    if use_ddp:
        model = nn.parallel.DistributedDataParallel(
            model, device_ids=[device] if device.type == "cuda" else None, broadcast_buffers=False,
            bucket_cap_mb=bucket_cap_mb)
    inputs = torch.rand([batch_size, 3, 224, 224], device=device)
    target = torch.tensor([1] * batch_size, dtype=torch.long, device=device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    times = []
    for i in range(warmup + iterations):
        start = time.time()
        loss = criterion(model(inputs), target)
        loss.backward()
        optimizer.step()
        sync()
        if i >= warmup:
            times.append(time.time() - start)
    return times


def row(label, ddp, times, batch_size):
    sec = {f"p{p}": float(np.percentile(times, p)) for p in PERCENTILES}
    return {"label": label, "ddp": ddp, "world_size": 1, "ranks": [0], "measurements": times,
            "sec_per_iter": sec, "examples_per_s": {k: batch_size / v for k, v in sec.items()}}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", action="append", help="torchvision model (repeatable; default resnet50)")
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--bucket_cap_mb", type=float, default=25)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--warmup_iterations", type=int, default=5)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tf32", choices=["default", "on", "off"], default="default",
                        help="TF32 for convolutions and matmuls; default: PyTorch's (convolutions only)")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    if args.tf32 != "default":
        set_tf32(args.tf32 == "on")
    device = torch.device(args.device)
    backend = "nccl" if device.type == "cuda" else "gloo"
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29531")
    dist.init_process_group(backend, rank=0, world_size=1)

    benchmarks = []
    for model_name in args.model or ["resnet50"]:
        timed = lambda ddp: time_iterations(model_name, args.batch_size, device, ddp, args.bucket_cap_mb,
                                            args.warmup_iterations, args.iterations)
        timed(False)  # the warm-up row
        rows = [row("no ddp", False, timed(False), args.batch_size), row("1M/1G", True, timed(True), args.batch_size)]
        rows[1]["overhead_p50"] = rows[1]["sec_per_iter"]["p50"] / rows[0]["sec_per_iter"]["p50"] - 1
        for r in rows:
            print(f"{model_name} {r['label']:>7}: " + "  ".join(
                f"p{p}: {r['sec_per_iter'][f'p{p}']:.3f}s {r['examples_per_s'][f'p{p}']:7.1f}/s" for p in PERCENTILES))
        benchmarks.append({"model": model_name, "batch_size": args.batch_size, "rows": rows})
    dist.destroy_process_group()

    cuda = device.type == "cuda"
    report = {
        "format": "trainstack.ddp_bench.v1",
        "environment": {
            "commit": f"pytorch {torch.__version__}",
            "device": str(device),
            "gpu_name": torch.cuda.get_device_name(device) if cuda else "none",
            "cpu_model": platform.processor(),
            "cuda_runtime": torch.version.cuda or "",
            "cudnn": str(torch.backends.cudnn.version()) if cuda else "",
            "nccl": ".".join(map(str, torch.cuda.nccl.version())) if cuda else "",
            "backend": backend,
            "world_size": 1,
            "ranks_per_machine": 1,
            "topology": "",
        },
        "config": {"models": args.model or ["resnet50"], "batch_size": args.batch_size,
                   "iterations": args.iterations, "warmup_iterations": args.warmup_iterations,
                   "bucket_cap_mb": args.bucket_cap_mb, "use_ddp_for_single_rank": True, "image_size": 224,
                   "num_classes": 1000, "world_size": 1, "device": str(device), "backend": backend,
                   # ddp_bench's tf32 switches both; PyTorch's default is
                   # TF32 convolutions with f32 matmuls.
                   "dtype": "f32", "tf32": torch.backends.cudnn.allow_tf32, "channels_last": False,
                   "tf32_matmul": torch.backends.cuda.matmul.allow_tf32},
        "benchmarks": benchmarks,
    }
    with open(args.json, "w") as f:
        json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
