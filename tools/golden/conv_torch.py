"""PyTorch's peer of //tests/nn:conv_benchmark's BM_ConvForwardBackward: each
ResNet-20 convolution (batch 128, 3x3, padding 1, no bias) forward and
backward (input and weight gradients) on the CPU, median milliseconds per
shape over the timed repetitions, as JSON lines.

  python3 tools/golden/conv_torch.py [--repeats 20] [--warmup 3]
"""
import argparse
import json

import torch
import torch.nn.functional as F

from step_timing import median_ms

# name, c_in, c_out, size, stride: conv_benchmark's kShapes, in its order.
SHAPES = [("stem_3to16_32x32", 3, 16, 32, 1), ("16to16_32x32", 16, 16, 32, 1), ("16to32_s2_32x32", 16, 32, 32, 2),
          ("32to32_16x16", 32, 32, 16, 1), ("32to64_s2_16x16", 32, 64, 16, 2), ("64to64_8x8", 64, 64, 8, 1)]
BATCH = 128


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    for name, c_in, c_out, size, stride in SHAPES:
        x = torch.randn(BATCH, c_in, size, size, requires_grad=True)
        w = torch.randn(c_out, c_in, 3, 3, requires_grad=True)
        out = (size + 2 - 3) // stride + 1
        grad = torch.randn(BATCH, c_out, out, out)

        def step():
            F.conv2d(x, w, stride=stride, padding=1).backward(grad)
            x.grad = None
            w.grad = None

        median = median_ms(step, args.warmup, args.repeats)
        print(json.dumps({"shape": name, "median_ms": median,
                          "threads": torch.get_num_threads(), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
