#!/usr/bin/env python3
"""torch.optim.Adam / AdamW on one small float64 example, for the worked
examples in tests/optim/adam_test.cc: a parameter [1, -2, 0.5] takes three
steps with the gradients below under each configuration, and the parameter
after each step is printed with 17 significant digits (C++ initializers).

  python3 tools/golden/adam_torch.py
"""
import torch

GRADS = [[0.5, -0.25, 1.0], [-0.3, 0.75, 0.2], [0.1, 0.1, -2.0]]
CONFIGS = [
    ("adam", torch.optim.Adam, dict(lr=0.1)),
    ("adam, weight decay", torch.optim.Adam, dict(lr=0.1, betas=(0.8, 0.99), eps=1e-3, weight_decay=0.05)),
    ("adamw", torch.optim.AdamW, dict(lr=0.1, weight_decay=0.05)),
    ("adam, amsgrad", torch.optim.Adam, dict(lr=0.1, amsgrad=True)),
    ("adamw, amsgrad", torch.optim.AdamW, dict(lr=0.05, betas=(0.5, 0.9), weight_decay=0.2, amsgrad=True)),
]


def main():
    print(f"// torch {torch.__version__}")
    for name, cls, kwargs in CONFIGS:
        p = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
        opt = cls([p], foreach=False, **kwargs)
        rows = []
        for g in GRADS:
            p.grad = torch.tensor(g, dtype=torch.float64)
            opt.step()
            rows.append("{" + ", ".join(f"{v:.17g}" for v in p.detach().tolist()) + "}")
        print(f'{{"{name}", {{{", ".join(rows)}}}}},')


if __name__ == "__main__":
    main()
