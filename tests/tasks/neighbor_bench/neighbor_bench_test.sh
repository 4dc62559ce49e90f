#!/usr/bin/env bash
# neighbor_bench end to end: 2 ranks under mpirun with a tiny model print
# Bluefog's lines (Iter #k, each rank's mean, the total) for every
# distributed optimizer, a dynamic topology and bf16 mixed precision in
# channels-last; the JSON report holds
# together; a one-rank report as --baseline gives the scaling efficiency;
# bad flags and a bad baseline (another kind of report, more ranks, other
# settings) end with one line and exit status 1; no warm-up is allowed.
#   neighbor_bench_test.sh NEIGHBOR_BENCH
set -uo pipefail
bench=$(realpath "$1")
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/neighbor_bench.XXXXXX")
cd "$dir"
export OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=$dir
failed=0
fail() { echo "FAIL: $*"; failed=1; }
tiny=(--model=resnet_tiny --image_size=32 --batch_size=2 --num_warmup_batches=1 --num_iters=3 --num_batches_per_iter=2)

echo "== one rank: the baseline"
"$bench" "${tiny[@]}" --json=one.json >one.log 2>&1 || fail "one rank exited with $?"
cat one.log
grep -q "^Total img/sec on 1 CPU(s): [0-9.]* +-[0-9.]*$" one.log || fail "no total line"

for opt in neighbor_allreduce hierarchical_neighbor_allreduce allreduce gradient_allreduce horovod; do
  echo "== 2 ranks, --dist_optimizer=$opt"
  mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --dist_optimizer=$opt --baseline=one.json --json=$opt.json \
    >$opt.log 2>&1 || fail "$opt exited with $?"
  cat $opt.log
  [ "$(grep -c '^Iter #[0-9]: [0-9.]* img/sec per CPU$' $opt.log)" = 3 ] || fail "$opt: not 3 Iter lines"
  for r in 0 1; do
    grep -q "^\[$r\] Img/sec per CPU: [0-9.]* +-[0-9.]*$" $opt.log || fail "$opt: no line of rank $r"
  done
  grep -q "^Total img/sec on 2 CPU(s): [0-9.]* +-[0-9.]*$" $opt.log || fail "$opt: no total line"
  grep -q "^Scaling efficiency against one.json: [0-9.]*%" $opt.log || fail "$opt: no efficiency line"
done

echo "== --baseline and --json given to rank 0 alone (only rank 0's count; the others had crashed or waited)"
timeout 300 mpirun --oversubscribe -np 1 "$bench" "${tiny[@]}" --baseline=one.json --json=only0.json : \
  -np 1 "$bench" "${tiny[@]}" >only0.log 2>&1 || { rc=$?; cat only0.log; fail "rank 0 alone with the paths exited with $rc"; }
grep -q "^Scaling efficiency against one.json: [0-9.]*%" only0.log || fail "only0: no efficiency line"
[ -f only0.json ] || fail "rank 0 wrote no only0.json"

echo "== 2 ranks, dynamic ring, ATC"
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --virtual_topology=ring --enable_dynamic_topology --style=atc \
  --json=dynamic.json >dynamic.log 2>&1 || fail "dynamic ring exited with $?"
cat dynamic.log

echo "== 2 ranks, inner-outer ring on the launcher's one machine; hierarchical with a machine per rank"
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --virtual_topology=inner_outer_ring \
  >inner_outer.log 2>&1 || fail "inner_outer_ring exited with $?"
grep -q "^Total img/sec on 2 CPU(s): " inner_outer.log || { cat inner_outer.log; fail "inner_outer_ring: no total line"; }
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --dist_optimizer=hierarchical_neighbor_allreduce --local_size=1 \
  >machines.log 2>&1 || fail "hierarchical with --local_size=1 exited with $?"
grep -q "^Total img/sec on 2 CPU(s): " machines.log || { cat machines.log; fail "hierarchical --local_size=1: no total line"; }

echo "== 2 ranks, f16 mixed precision, each rank voting on skipped steps"
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --dtype=f16 --json=f16.json >f16.log 2>&1 || fail "f16 exited with $?"
cat f16.log
grep -q "^Total img/sec on 2 CPU(s): [0-9.]* +-[0-9.]*$" f16.log || fail "f16: no total line"
grep -q "^Loss scaler: [0-6] of 6 timed batches skipped$" f16.log || fail "f16: no line of skipped batches"

echo "== 2 ranks, bf16 mixed precision, channels-last"
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --dtype=bf16 --channels_last --json=bf16.json \
  >bf16.log 2>&1 || fail "bf16 exited with $?"
cat bf16.log
grep -q "^Precision: bf16/channels_last$" bf16.log || fail "bf16: no precision line"
grep -q "^Total img/sec on 2 CPU(s): [0-9.]* +-[0-9.]*$" bf16.log || fail "bf16: no total line"

python3 - <<'PY' || fail "the reports do not hold together"
import json
for name, optimizer in [("neighbor_allreduce", "neighbor_allreduce"), ("horovod", "gradient_allreduce"),
                        ("dynamic", "neighbor_allreduce")]:
    r = json.load(open(name + ".json"))
    assert r["format"] == "trainstack.neighbor_bench.v1"
    c = r["config"]
    assert c["dist_optimizer"] == optimizer and c["world_size"] == 2, c
    per_rank, total = r["iterations"]["per_rank"], r["iterations"]["total"]
    assert len(per_rank) == 2 and all(len(p) == 3 for p in per_rank) and len(total) == 3
    for k in range(3):
        assert abs(per_rank[0][k] + per_rank[1][k] - total[k]) < 1e-9 * total[k]
    mean = sum(total) / 3
    assert abs(r["total"]["mean"] - mean) < 1e-9 * mean
    std = (sum((t - mean) ** 2 for t in total) / 3) ** 0.5
    assert abs(r["total"]["conf"] - 1.96 * std) < 1e-9 * mean + 1e-12
    assert [p["rank"] for p in r["per_rank"]] == [0, 1]
b = json.load(open("bf16.json"))["config"]
assert (b["dtype"], b["tf32"], b["channels_last"]) == ("bf16", False, True), b
assert 0 <= json.load(open("f16.json"))["skipped_steps"] <= 6
d = json.load(open("dynamic.json"))["config"]
assert d["dtype"] == "f32" and not d["channels_last"], d
assert d["dynamic_topology"] and d["virtual_topology"] == "ring" and d["style"] == "atc", d
s = json.load(open("neighbor_allreduce.json"))
one = json.load(open("one.json"))
assert s["scaling"]["baseline_img_per_s"] == one["total"]["mean"]
assert abs(s["scaling"]["efficiency"] - s["total"]["mean"] / (2 * one["total"]["mean"])) < 1e-12
print("reports ok")
PY

echo "== bad input: one line, exit status 1"
check_error() {  # expected-text flags...
  local want=$1; shift
  "$bench" "${tiny[@]}" "$@" >err.log 2>&1
  local rc=$?
  cat err.log
  [ "$rc" = 1 ] || fail "$*: exit status $rc, want 1"
  [ "$(wc -l <err.log)" = 1 ] || fail "$*: more than one line"
  grep -q -- "$want" err.log || fail "$*: the error does not say '$want'"
}
check_error "unknown model 'lenet'" --model=lenet
check_error "unknown value 'torus'" --virtual_topology=torus
check_error "unknown value 'win_put'" --dist_optimizer=win_put
check_error "dtype=f64: must be f32, f16 or bf16" --dtype=f64
check_error "missing.json" --baseline=missing.json
check_error "dynamic.log: JSON parse error at line 1" --baseline=dynamic.log
echo '{"format": "trainstack.report.v1"}' >task_report.json
check_error "task_report.json: not a neighbor_bench report" --baseline=task_report.json
check_error "not a one-rank report" --baseline=dynamic.json
check_error "one.json: its config.batch_size is 2, this run's is 4" --baseline=one.json --batch_size=4
check_error "one.json: its config.dtype is \"f32\", this run's is \"bf16\"" --baseline=one.json --dtype=bf16

echo "== 2 ranks, a baseline rank 0 refuses: every rank stops at once, rank 0 says why"
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --baseline=one.json --batch_size=4 >refused.log 2>&1
rc=$?
cat refused.log
[ "$rc" != 0 ] || fail "a refused baseline on 2 ranks exited 0"
[ "$(grep -c 'its config.batch_size is 2' refused.log)" = 1 ] || fail "rank 0 did not say once why"
grep -q "Running warmup" refused.log && fail "the ranks started timing"

echo "== no warm-up batches"
"$bench" "${tiny[@]}" --num_warmup_batches=0 >nowarmup.log 2>&1 || fail "--num_warmup_batches=0 exited with $?"
grep -q "^Total img/sec on 1 CPU(s): " nowarmup.log || { cat nowarmup.log; fail "--num_warmup_batches=0: no total line"; }

[ "$failed" = 0 ] && echo PASS
exit "$failed"
