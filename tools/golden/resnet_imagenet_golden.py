#!/usr/bin/env python3
"""torchvision's bottleneck ResNets from shared weights, as the PyTorch
reference for our nn::models::ResNet (tests/nn/models/resnet_imagenet_golden_test.cc).

Run by hand in a throwaway venv with torch and torchvision from PyPI, from
the repository root; never a dependency of the project or of CI:

  python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch torchvision
  /tmp/torchvenv/bin/python tools/golden/resnet_imagenet_golden.py \\
      tests/nn/models/testdata/resnet_imagenet_golden.tsckpt

The models: torchvision's resnet50 and resnext50_32x4d (the 3x3 conv in 32
groups), and our resnet_tiny (torchvision's ResNet class with one bottleneck
per stage and width_per_group 16), each with 10 classes. No weights travel:
both sides fill every floating entry of the state dict by one counter-based
rule (fill() below, repeated in the C++ test), keyed by the entry's name, so
the names must be torchvision's for the values to meet. Batch 2 of 3x64x64
images from the same rule, in float64.

For each model and for each of train and eval mode, from freshly filled
weights: one forward, the loss sum(logits * W) with W from the rule, one
backward. Written in our checkpoint format (nn/checkpoint.h):
  "<model>.<mode>.logits"          the logits, in full
  "<model>.<mode>.grad.input"      the input's gradient, as a signature
  "<model>.<mode>.grad.<param>"    every parameter's gradient, as a signature
  "<model>.train.<bn>.running_mean", ".running_var"
                                   the batch norms' statistics after the
                                   training forward, as signatures
  "fill.<name>"                    the first values the rule gives, so that a
                                   disagreement in the rule itself shows first
A signature (signature() below) is sum, sum |g|, sum g^2, max |g|, a
projection on pseudo-random weights and six entries at fixed indices: a few
dozen KB where the gradients themselves would be 200 MB.
"""
import argparse
import math

import numpy as np
import torch
import torchvision

from checkpoint_format import save_tensors

NUM_CLASSES, BATCH, SIZE = 10, 2, 64
MODELS = ("resnet50", "resnext50_32x4d", "resnet_tiny")
MASK = np.uint64(0xFFFFFFFF)


def make_model(name):
    if name == "resnet_tiny":
        return torchvision.models.resnet.ResNet(torchvision.models.resnet.Bottleneck, [1, 1, 1, 1],
                                                num_classes=NUM_CLASSES, width_per_group=16)
    return getattr(torchvision.models, name)(num_classes=NUM_CLASSES)


def key_of(name):
    """FNV-1a (32 bits) of the name's bytes."""
    h = 2166136261
    for b in name.encode():
        h = ((h ^ b) * 16777619) & 0xFFFFFFFF
    return h


def unit(name, n):
    """n values in [-1, 1), multiples of 2^-23, from a 32-bit hash (lowbias32)
    of (element index * golden ratio + the name's key)."""
    x = (np.arange(n, dtype=np.uint64) * np.uint64(0x9E3779B1) + np.uint64(key_of(name))) & MASK
    x ^= x >> np.uint64(16)
    x = (x * np.uint64(0x7FEB352D)) & MASK
    x ^= x >> np.uint64(15)
    x = (x * np.uint64(0x846CA68B)) & MASK
    x ^= x >> np.uint64(16)
    return ((x >> np.uint64(8)).astype(np.float64) - 2.0**23) / 2.0**23


def fill(name, shape):
    """The value of state dict entry `name`: conv and linear weights uniform
    with kaiming's bound sqrt(6 / fan_in); batch-norm weights and running
    variances 1 + u / 4; biases and running means u / 4. Every step is one
    correctly rounded IEEE operation on exact values, so C++ gets the same
    bits."""
    n = math.prod(shape)
    u = unit(name, n)
    if len(shape) >= 2:
        values = u * math.sqrt(6.0 / (n // shape[0]))
    elif name.endswith("running_var") or name.endswith(".weight"):
        values = 1.0 + u / 4
    else:
        values = u / 4
    return torch.from_numpy(values).reshape(shape)


def fill_model(model):
    with torch.no_grad():
        for name, t in model.state_dict().items():
            if t.is_floating_point():
                t.copy_(fill(name, tuple(t.shape)))
            else:
                t.zero_()  # num_batches_tracked


def signature(g):
    g = g.detach().reshape(-1).to(torch.float64)
    n = g.numel()
    entries = g[[(j * (n - 1)) // 5 for j in range(6)]]
    head = torch.stack([g.sum(), g.abs().sum(), (g * g).sum(), g.abs().max(),
                        (torch.from_numpy(unit("signature", n)) * g).sum()])
    return torch.cat([head, entries])


def run(name, train):
    model = make_model(name).to(torch.float64)  # torchvision's random init is overwritten
    fill_model(model)
    model.train(train)
    x = fill("input", (BATCH, 3, SIZE, SIZE)).requires_grad_()
    logits = model(x)
    (logits * fill("loss_weight", (BATCH, NUM_CLASSES))).sum().backward()
    mode = "train" if train else "eval"
    out = [(f"{name}.{mode}.logits", logits.detach()), (f"{name}.{mode}.grad.input", signature(x.grad))]
    out += [(f"{name}.{mode}.grad.{k}", signature(p.grad)) for k, p in model.named_parameters()]
    if train:
        out += [(f"{name}.{mode}.{k}", signature(b)) for k, b in model.named_buffers()
                if k.endswith("running_mean") or k.endswith("running_var")]
    return out


def make_fixture(path):
    named = [("fill." + n, fill(n, s).reshape(-1)[:8]) for n, s in
             (("input", (BATCH, 3, SIZE, SIZE)), ("loss_weight", (BATCH, NUM_CLASSES)),
              ("conv1.weight", (64, 3, 7, 7)), ("layer1.0.bn1.weight", (64,)),
              ("layer1.0.bn1.running_var", (64,)), ("fc.bias", (NUM_CLASSES,)))]
    for name in MODELS:
        for train in (True, False):
            named += run(name, train)
    save_tensors(path, named)
    print(f"wrote {path}: {len(named)} entries")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    make_fixture(parser.parse_args().path)


if __name__ == "__main__":
    main()
