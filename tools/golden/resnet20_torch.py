#!/usr/bin/env python3
"""PyTorch references for our ResNet-20 (MLBench's ResNetCIFAR, version 1).

Run by hand in a throwaway venv with torch from PyPI; never a dependency of
the project or of CI:

  python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch
  /tmp/torchvenv/bin/python tools/golden/resnet20_torch.py fixture \
      tests/nn/models/testdata/resnet20_golden.tsckpt
  /tmp/torchvenv/bin/python tools/golden/resnet20_torch.py step-time --batch 128
  python3 tools/golden/resnet20_torch.py step-time --device cuda [--ddp]   # GPU machine

`fixture` writes, in our checkpoint format (nn/checkpoint.h), the initial
state ("init.<name>"), a batch of 8 ("input", "target"), the logits and loss
of the first forward, every parameter's gradient ("grad.<name>"), and the
losses of 10 SGD steps on that batch in f32 ("losses") and f64
("losses_f64"). `step-time` times one
training step (forward, backward, SGD) of the same model on this machine's
CPU or GPU, plain or wrapped in DistributedDataParallel in a process group of
one rank (the peer of our force_ddp), and prints a JSON line.
"""
import argparse
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

from checkpoint_format import save_tensors
from step_timing import add_step_time_arguments, print_report, set_tf32, time_steps

# The recipe the fixture's 10 steps use; tests/nn/models/resnet20_golden_test.cc
# repeats it.
LR, MOMENTUM, WEIGHT_DECAY, NESTEROV = 0.02, 0.9, 1e-4, True


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.downsample = None
        if stride != 1:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                            nn.BatchNorm2d(cout))

    def forward(self, x):
        shortcut = x if self.downsample is None else self.downsample(x)
        y = F.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return F.relu(y + shortcut)


class ResNetCIFAR(nn.Module):
    def __init__(self, depth=20, num_classes=10):
        super().__init__()
        self.prep = nn.Sequential(nn.Conv2d(3, 16, 3, 1, 1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU())
        blocks, cin = (depth - 2) // 6, 16
        for stage, width in enumerate((16, 32, 64)):
            layers = []
            for i in range(blocks):
                layers.append(BasicBlock(cin, width, 2 if stage > 0 and i == 0 else 1))
                cin = width
            setattr(self, f"conv_{stage + 1}", nn.Sequential(*layers))
        self.avgpool = nn.AvgPool2d(8)
        self.classifier = nn.Linear(64, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.prep(x)
        x = self.conv_3(self.conv_2(self.conv_1(x)))
        return self.classifier(torch.flatten(self.avgpool(x), 1))


def make_fixture(path):
    torch.manual_seed(0)
    model = ResNetCIFAR()
    model.train()
    x = torch.randn(8, 3, 32, 32)
    target = torch.randint(0, 10, (8,))
    init = [("init." + k, v.clone()) for k, v in model.state_dict().items()]

    logits = model(x)
    loss = F.cross_entropy(logits, target)
    loss.backward()
    grads = [("grad." + k, p.grad.clone()) for k, p in model.named_parameters()]

    # 10 SGD steps from the same initial state, on the same batch, in f32
    # and in f64 (where both frameworks agree to ~1e-12 if the math is the same).
    def sgd_losses(dtype):
        model.load_state_dict(dict((k[5:], v) for k, v in init))
        model.to(dtype)
        model.zero_grad(set_to_none=True)
        opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM,
                              weight_decay=WEIGHT_DECAY, nesterov=NESTEROV)
        out = []
        for _ in range(10):
            opt.zero_grad(set_to_none=True)
            step_loss = F.cross_entropy(model(x.to(dtype)), target)
            step_loss.backward()
            opt.step()
            out.append(step_loss.item())
        return out

    losses = sgd_losses(torch.float32)
    losses64 = sgd_losses(torch.float64)

    named = init + [("input", x), ("target", target), ("logits", logits), ("loss", loss.reshape(1))]
    named += grads + [("losses", torch.tensor(losses, dtype=torch.float32)),
                      ("losses_f64", torch.tensor(losses64, dtype=torch.float64))]
    save_tensors(path, named)
    print(f"wrote {path}: {len(named)} entries, losses {losses[0]:.4f} -> {losses[-1]:.4f}")


def step_time(batch, steps, warmup, device, ddp):
    torch.manual_seed(0)
    device = torch.device(device)
    set_tf32(False)  # f32 against our f32
    model = ResNetCIFAR().to(device)
    model.train()
    if ddp:
        import torch.distributed as dist
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=0, world_size=1)
        model = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-4,
                          nesterov=True)
    x = torch.randn(batch, 3, 32, 32, device=device)
    target = torch.randint(0, 10, (batch,), device=device)
    times = time_steps(model, opt, x, target, steps, warmup)
    print_report(f"{device.type}{' ddp' if ddp else ''}", device, times, tf32=False, batch=batch)
    if ddp:
        torch.distributed.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    fixture = sub.add_parser("fixture")
    fixture.add_argument("path")
    timing = sub.add_parser("step-time")
    add_step_time_arguments(timing, batch=128, steps=20, warmup=3, device="cpu")
    timing.add_argument("--ddp", action="store_true")
    args = parser.parse_args()
    if args.command == "fixture":
        make_fixture(args.path)
    else:
        step_time(args.batch, args.steps, args.warmup, args.device, args.ddp)


if __name__ == "__main__":
    main()
