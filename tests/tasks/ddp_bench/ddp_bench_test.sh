#!/usr/bin/env bash
# ddp_bench end to end: 2 ranks under mpirun with a tiny model print the
# table (header, a row per sweep entry) and write a report whose rows and
# percentiles hold together; one process alone gives the no-ddp and 1M/1G
# rows; f16 mixed precision in channels-last runs and says so; bad flags end
# with one line naming the flag and exit status 1.
#   ddp_bench_test.sh DDP_BENCH
set -uo pipefail
bench=$(realpath "$1")
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ddp_bench.XXXXXX")
cd "$dir"
export OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=$dir
failed=0
fail() { echo "FAIL: $*"; failed=1; }
tiny=(--model=resnet_tiny --image_size=32 --batch_size=2 --iterations=3 --warmup_iterations=1)

echo "== 2 ranks, two models (--model repeated)"
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --model=resnet_tiny --bucket_cap_mb=1 --json=two.json \
  >two.log 2>&1 || fail "mpirun ddp_bench exited with $?"
cat two.log
grep -q "^\* Distributed backend: mpi" two.log || fail "no backend line in the header"
grep -q "^\* Maximum bucket size: 1MB" two.log || fail "no bucket size line in the header"
[ "$(grep -c '^Benchmark: resnet_tiny with batch size 2' two.log)" = 2 ] || fail "not two benchmark sections"
for row in "1 CPUs --   no ddp:" "1 CPUs --    1M/1G:" "2 CPUs --    1M/2G:"; do
  [ "$(grep -c -- "$row  p50:" two.log)" = 2 ] || fail "no '$row' row per model"
done
grep -q "warmup" two.log && fail "the warm-up row is printed"
python3 - two.json <<'PY' || fail "two.json does not hold together"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["format"] == "trainstack.ddp_bench.v1", r["format"]
assert r["config"]["models"] == ["resnet_tiny", "resnet_tiny"], r["config"]["models"]
assert r["config"]["bucket_cap_mb"] == 1 and r["config"]["world_size"] == 2
assert r["environment"]["backend"] == "mpi" and r["environment"]["commit"]
for b in r["benchmarks"]:
    assert [row["label"] for row in b["rows"]] == ["no ddp", "1M/1G", "1M/2G"], b["rows"]
    for row in b["rows"]:
        # Every rank of the row contributes its timed iterations.
        assert len(row["measurements"]) == 3 * row["world_size"], row
        assert all(t > 0 for t in row["measurements"])
        s, e = row["sec_per_iter"], row["examples_per_s"]
        assert min(row["measurements"]) <= s["p50"] <= s["p75"] <= s["p90"] <= s["p95"] <= max(row["measurements"])
        assert abs(e["p50"] * s["p50"] - 2) < 1e-9
    assert [row["ddp"] for row in b["rows"]] == [False, True, True]
print("two.json ok")
PY

echo "== one process, no launcher"
"$bench" "${tiny[@]}" --use_ddp_for_single_rank=false --json=one.json >one.log 2>&1 || fail "ddp_bench alone exited with $?"
cat one.log
python3 -c "
import json
r = json.load(open('one.json'))
rows = r['benchmarks'][0]['rows']
assert [x['label'] for x in rows] == ['no ddp', '1M/1G'] and not rows[1]['ddp'], rows
" || fail "one.json rows are wrong"

echo "== 2 ranks, f16 mixed precision, channels-last"
mpirun --oversubscribe -np 2 "$bench" "${tiny[@]}" --dtype=f16 --channels_last --json=f16.json >f16.log 2>&1 ||
  fail "f16 exited with $?"
cat f16.log
grep -q "^\* Precision: f16/channels_last$" f16.log || fail "f16: no precision line in the header"
grep -q -- "2 CPUs --    1M/2G:  p50:" f16.log || fail "f16: no 1M/2G row"
grep -q "^Loss scaler, timed iterations skipped of 3: no ddp [0-3], 1M/1G [0-3], 1M/2G [0-3]$" f16.log ||
  fail "f16: no line of skipped steps"
python3 -c "
import json
r = json.load(open('f16.json'))
c = r['config']
assert (c['dtype'], c['tf32'], c['channels_last']) == ('f16', False, True), c
assert all(0 <= row['skipped_steps'] <= 3 for row in r['benchmarks'][0]['rows']), r['benchmarks'][0]['rows']
c = json.load(open('two.json'))['config']
assert (c['dtype'], c['tf32'], c['channels_last']) == ('f32', False, False), c
" || fail "the reports do not say their precision"

echo "== --json given to rank 0 alone (only rank 0's counts; the others had waited for its check)"
timeout 300 mpirun --oversubscribe -np 1 "$bench" "${tiny[@]}" --json=only0.json : -np 1 "$bench" "${tiny[@]}" \
  >only0.log 2>&1 || { rc=$?; cat only0.log; fail "ddp_bench with --json on rank 0 alone exited with $rc"; }
[ -f only0.json ] || fail "rank 0 wrote no only0.json"

echo "== ranks given another --batch_size: every rank stops at once, the one that differs naming the flag"
timeout 300 mpirun --oversubscribe -np 1 "$bench" "${tiny[@]}" : -np 1 "$bench" "${tiny[@]}" --batch_size=4 \
  >apart.log 2>&1 && fail "ranks given other flags ran on"
cat apart.log
grep -q "ddp_bench: rank 1 differs from rank 0 in its flags (--batch_size=4 here, =2 on rank 0)" apart.log ||
  fail "rank 1 does not name the flag"
grep -q "ddp_bench: rank(s) 1 differ from rank 0 in their flags" apart.log || fail "rank 0 does not name rank 1"

echo "== bad flags: one line, exit status 1"
check_error() {  # expected-text flags...
  local want=$1; shift
  "$bench" "$@" >err.log 2>&1
  local rc=$?
  cat err.log
  [ "$rc" = 1 ] || fail "$*: exit status $rc, want 1"
  [ "$(wc -l <err.log)" = 1 ] || fail "$*: more than one line"
  grep -q -- "$want" err.log || fail "$*: the error does not say '$want'"
}
check_error "unknown model 'resnet18'" --model=resnet18
check_error "batch_size=0" --batch_size=0
check_error "image_size=8" --image_size=8
check_error "bucket_cap_mb=0" --bucket_cap_mb=0
check_error "bucket_cap_mb=inf" --bucket_cap_mb=inf
check_error "dtype=f64: must be f32, f16 or bf16" --dtype=f64

[ "$failed" = 0 ] && echo PASS
exit "$failed"
