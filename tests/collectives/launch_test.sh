#!/usr/bin/env bash
# tools/launch --dry-run prints the mpirun (or srun) line it would run: rank
# count from cores, GPUs or -H slots, binding per device, the binary path.
set -euo pipefail
launch=$1
fake_bin=$(mktemp -d)
trap 'rm -rf "$fake_bin"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# CPU machine (no nvidia-smi on PATH): one rank per core slot, bound to cores.
out=$(PATH=/usr/bin:/bin "$launch" --dry-run -np 2 //tasks/comm_bench -- --repeats=3)
echo "$out"
[[ $out == *"mpirun -np 2"* ]] || fail "np"
[[ $out == *"--map-by core --bind-to core"* ]] || fail "cpu binding"
[[ $out == *"bazel-bin/tasks/comm_bench/comm_bench --repeats=3" ]] || fail "binary and task flags"

# The printed line is quoted so that it can be pasted back into a shell.
out=$(PATH=/usr/bin:/bin "$launch" --dry-run -np 2 //tasks/comm_bench -- "--run_name=a b" "--note=it's")
[[ $out == *"comm_bench '--run_name=a b' '--note=it'\"'\"'s'" ]] || fail "quoting: $out"

# Default -np on a CPU machine: the core count.
out=$(PATH=/usr/bin:/bin "$launch" --dry-run //tasks/comm_bench:comm_bench)
[[ $out == *"mpirun -np $(nproc) "* ]] || fail "default np: $out"

# Four GPUs: one rank per GPU, no core binding.
printf '#!/bin/sh\nfor i in 0 1 2 3; do echo "GPU $i: H100 (UUID: x)"; done\n' >"$fake_bin/nvidia-smi"
chmod +x "$fake_bin/nvidia-smi"
out=$(PATH="$fake_bin:/usr/bin:/bin" NCCL_DEBUG=WARN "$launch" --dry-run //tasks/comm_bench -- --device=cuda)
echo "$out"
[[ $out == *"mpirun -np 4"* ]] || fail "np from GPUs"
[[ $out == *"--bind-to none"* ]] || fail "gpu binding"
[[ $out == *"-x NCCL_DEBUG"* ]] || fail "environment"

# Hosts: ranks from the slots.
out=$(PATH=/usr/bin:/bin "$launch" --dry-run -H a:8,b:8 //tasks/comm_bench)
[[ $out == *"mpirun -np 16"*"-H a:8,b:8"* ]] || fail "hosts: $out"

# Inside Slurm: srun.
out=$(PATH=/usr/bin:/bin SLURM_JOB_ID=42 "$launch" --dry-run -np 3 //tasks/comm_bench)
echo "$out"
[[ $out == "launch: srun --ntasks=3 --cpu-bind=cores "* ]] || fail "srun"

# Errors.
if PATH=/usr/bin:/bin "$launch" --dry-run -H nohost //tasks/comm_bench 2>/dev/null; then fail "bad -H accepted"; fi
if "$launch" --dry-run 2>/dev/null; then fail "missing target accepted"; fi
echo PASS
