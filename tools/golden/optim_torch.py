#!/usr/bin/env python3
"""torch.optim.Adam / AdamW and ASGD on one small float64 example, for the
worked examples in tests/optim/adam_test.cc and asgd_test.cc: a parameter
[1, -2, 0.5] takes three steps with the gradients below under each
configuration, and the parameter after each step (and, for ASGD, its
average `ax`) is printed with 17 significant digits (C++ initializers).

  python3 tools/golden/optim_torch.py
"""
import torch

GRADS = [[0.5, -0.25, 1.0], [-0.3, 0.75, 0.2], [0.1, 0.1, -2.0]]
ADAM = [
    ("adam", torch.optim.Adam, dict(lr=0.1)),
    ("adam, weight decay", torch.optim.Adam, dict(lr=0.1, betas=(0.8, 0.99), eps=1e-3, weight_decay=0.05)),
    ("adamw", torch.optim.AdamW, dict(lr=0.1, weight_decay=0.05)),
    # beta2 0.5 lets the second moment of the first coordinate fall at step 3,
    # where amsgrad keeps its maximum (with 0.999 it never falls here).
    ("adam, amsgrad", torch.optim.Adam, dict(lr=0.1, betas=(0.9, 0.5), amsgrad=True)),
    ("adam, beta2 0.5", torch.optim.Adam, dict(lr=0.1, betas=(0.9, 0.5))),
    ("adamw, amsgrad", torch.optim.AdamW, dict(lr=0.05, betas=(0.5, 0.9), weight_decay=0.2, amsgrad=True)),
]
ASGD = [
    ("asgd defaults", dict(lr=0.1)),
    ("asgd as awd-lstm", dict(lr=0.1, t0=0, lambd=0.0, weight_decay=1.2e-6)),
    ("asgd, decay", dict(lr=0.2, lambd=0.05, alpha=0.5, t0=0, weight_decay=0.01)),
]


def values(t):
    return "{" + ", ".join(f"{v:.17g}" for v in t.detach().tolist()) + "}"


def run(name, make, state=None):
    p = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64, requires_grad=True)
    opt = make([p])
    rows = []
    for g in GRADS:
        p.grad = torch.tensor(g, dtype=torch.float64)
        opt.step()
        rows.append(values(p))
        if state:
            rows.append(values(opt.state[p][state]))
    print(f'{{"{name}", {{{", ".join(rows)}}}}},')


def main():
    print(f"// torch {torch.__version__}; Adam: the parameter after each step")
    for name, cls, kwargs in ADAM:
        run(name, lambda params: cls(params, foreach=False, **kwargs))
    print("// ASGD: the parameter and ax after each step")
    for name, kwargs in ASGD:
        run(name, lambda params: torch.optim.ASGD(params, foreach=False, **kwargs), state="ax")


if __name__ == "__main__":
    main()
