#!/usr/bin/env bash
# tools/launch --dry-run prints the mpirun (or srun) line it would run: rank
# count from cores, GPUs, -H slots or the Slurm allocation, binding per
# device, the binary path; bad arguments are one line and exit status 2.
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

# Inside Slurm: srun, with the allocation's task count by default, not this
# node's cores or GPUs; -np still says.
out=$(PATH=/usr/bin:/bin SLURM_JOB_ID=42 "$launch" --dry-run -np 3 //tasks/comm_bench)
echo "$out"
[[ $out == "launch: srun --ntasks=3 --cpu-bind=cores "* ]] || fail "srun"
out=$(PATH="$fake_bin:/usr/bin:/bin" SLURM_JOB_ID=42 SLURM_NTASKS=16 "$launch" --dry-run //tasks/comm_bench)
[[ $out == "launch: srun --ntasks=16 --gpus-per-task=1 --cpu-bind=none "* ]] || fail "srun default ntasks: $out"
out=$(PATH=/usr/bin:/bin SLURM_JOB_ID=42 "$launch" --dry-run //tasks/comm_bench)
[[ $out == "launch: srun --cpu-bind=cores "* ]] || fail "srun without SLURM_NTASKS: $out"

# Errors: one line naming the argument, exit status 2, no command printed.
expect_error() {  # message-fragment launch-args...
  local fragment=$1 out rc=0
  shift
  out=$(PATH=/usr/bin:/bin "$launch" --dry-run "$@" 2>&1) || rc=$?
  [ "$rc" = 2 ] || fail "$* exited $rc: $out"
  [[ $out == *"$fragment"* ]] || fail "$*: no '$fragment' in: $out"
  [[ $out != *"launch: mpirun"* && $out != *"launch: srun"* && $out != *"unbound variable"* ]] || fail "$*: $out"
}
expect_error "needs host:slots" -H nohost //tasks/comm_bench
expect_error "-H entry 'a:x' needs host:slots, slots a whole number >= 1" -H a:x //tasks/comm_bench
expect_error "-H entry 'a:0'" -H a:0 //tasks/comm_bench
expect_error "-np needs a value" //tasks/comm_bench -np
expect_error "-np 'two': the number of ranks must be a whole number >= 1" -np two //tasks/comm_bench
expect_error "-np '0'" -np 0 //tasks/comm_bench
expect_error "-np '-2'" -np -2 //tasks/comm_bench
expect_error "a second target '//tasks/logreg' (already //tasks/comm_bench)" //tasks/comm_bench //tasks/logreg
expect_error "no target" -np 2
out=$(SLURM_JOB_ID=42 PATH=/usr/bin:/bin "$launch" --dry-run -H a:8,b:8 //tasks/comm_bench 2>&1) && fail "-H under Slurm accepted"
[[ $out == *"-H a:8,b:8 inside a Slurm allocation (SLURM_JOB_ID=42): srun takes the hosts from the allocation"* ]] ||
  fail "-H under Slurm: $out"

# The usage text is the script's comment, not its code.
out=$("$launch" --help 2>&1) && fail "--help exited 0"
[[ $out == *"tools/launch [-np N]"* && $out == *"--gpus-per-task=1"* ]] || fail "usage: $out"
[[ $out != *"set -euo"* && $out != *"#!"* ]] || fail "usage prints code: $out"
echo PASS
