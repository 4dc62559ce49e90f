"""The timed training step the PyTorch peers share: forward, cross-entropy,
backward, SGD, with the device synchronized around each step so a step's time
is its completion, and cuDNN's algorithm search on. Imported by
resnet20_torch.py and resnet50_torch.py; the per-layer peers (conv_torch.py,
batch_norm_torch.py) share median_ms."""
import json
import os
import platform
import time

import torch
import torch.nn.functional as F


def add_step_time_arguments(parser, batch, steps, warmup, device):
    """The step-time subcommand's options, with each peer's defaults."""
    parser.add_argument("--batch", type=int, default=batch)
    parser.add_argument("--steps", type=int, default=steps)
    parser.add_argument("--warmup", type=int, default=warmup)
    parser.add_argument("--device", default=device)


def set_tf32(allow):
    # PyTorch's cuDNN convolutions default to TF32; matmuls do not. Both follow
    # `allow`, as our set_allow_tf32 does.
    torch.backends.cudnn.allow_tf32 = allow
    torch.backends.cuda.matmul.allow_tf32 = allow


def time_steps(model, opt, x, target, steps, warmup, amp_dtype=None):
    """Seconds per step, sorted, after `warmup` untimed steps; on CUDA the
    peak memory of the timed steps is torch.cuda.max_memory_allocated().
    amp_dtype (torch.float16, torch.bfloat16): PyTorch's automatic mixed
    precision, autocast around the forward and the loss, GradScaler's
    defaults for float16."""
    cuda = x.device.type == "cuda"
    traced = cuda and bool(os.environ.get("TS_KERNEL_TRACE"))
    # cuDNN times its convolution algorithms per shape and keeps the fastest,
    # as torchvision's reference training script has it (cudnn.benchmark)
    # and as our convolutions always do (cudnnFind); PyTorch's default picks
    # by heuristics, which would make a weaker peer.
    torch.backends.cudnn.benchmark = True
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    scaler = torch.amp.GradScaler(x.device.type, enabled=amp_dtype == torch.float16)
    times = []
    for i in range(warmup + steps):
        if i == warmup and cuda:
            torch.cuda.reset_peak_memory_stats(x.device)
        sync()
        # Under tools/kernel_profile (TS_KERNEL_TRACE set) a timed step is a
        # profiler window, as in our ResNet-50 step benchmark; the tracer is
        # attached then, so the calls succeed (their status is not checked).
        window = traced and i >= warmup
        if window:
            torch.cuda.cudart().cudaProfilerStart()
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast(x.device.type, dtype=amp_dtype or torch.float32, enabled=amp_dtype is not None):
            loss = F.cross_entropy(model(x), target)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        sync()
        if i >= warmup:
            times.append(time.perf_counter() - start)
        if window:
            torch.cuda.cudart().cudaProfilerStop()
    return sorted(times)


def peak_memory_gib(device):
    """What time_steps measured, 0 off CUDA."""
    return torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else 0.0


def median_ms(run, warmup, repeats):
    """Median milliseconds of run() on the CPU over `repeats` calls after
    `warmup` untimed ones."""
    times = []
    for i in range(warmup + repeats):
        start = time.perf_counter()
        run()
        if i >= warmup:
            times.append(time.perf_counter() - start)
    times.sort()
    return 1e3 * times[len(times) // 2]


def print_report(peer, device, times, **fields):
    """One JSON line: the peer, where it ran, median and min step time."""
    where = (torch.cuda.get_device_name(device) if device.type == "cuda"
             else (platform.processor() or platform.machine()))
    print(json.dumps({"peer": f"pytorch {torch.__version__} {peer}", "threads": torch.get_num_threads(),
                      "device": where, **fields, "steps": len(times),
                      "median_step_s": times[len(times) // 2], "min_step_s": times[0]}))
