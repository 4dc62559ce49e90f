#!/usr/bin/env python3
"""PyTorch's peer of //tests/nn:batch_norm_benchmark's
BM_BatchNormForwardBackward: batch norm in training mode over each ResNet-20
activation shape (batch 128), row-major and channels-last, forward and
backward (input, weight and bias gradients) on the CPU, median milliseconds
per shape and layout over the timed repetitions, as JSON lines. PyTorch's CPU batch norm is its own ATen kernel
(oneDNN's is used only for its mkldnn tensors).

  python3 tools/golden/batch_norm_torch.py [--repeats 50] [--warmup 5]
"""
import argparse
import itertools
import json

import torch
import torch.nn.functional as F

from step_timing import median_ms

# name, channels, size: batch_norm_benchmark's kShapes, in its order.
SHAPES = [("16x32x32", 16, 32), ("32x16x16", 32, 16), ("64x8x8", 64, 8)]
BATCH = 128


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    for (name, channels, size), channels_last in itertools.product(SHAPES, (False, True)):
        layout = torch.channels_last if channels_last else torch.contiguous_format
        x = torch.randn(BATCH, channels, size, size).contiguous(memory_format=layout).requires_grad_()
        w = torch.ones(channels, requires_grad=True)
        b = torch.zeros(channels, requires_grad=True)
        running_mean, running_var = torch.zeros(channels), torch.ones(channels)
        grad = torch.randn(BATCH, channels, size, size).contiguous(memory_format=layout)

        def step():
            F.batch_norm(x, running_mean, running_var, w, b, training=True, momentum=0.1, eps=1e-5).backward(grad)
            x.grad = w.grad = b.grad = None

        print(json.dumps({"shape": name, "channels_last": channels_last, "median_ms": median_ms(step, args.warmup, args.repeats),
                          "threads": torch.get_num_threads(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
