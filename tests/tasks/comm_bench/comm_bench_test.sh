#!/usr/bin/env bash
# comm_bench end to end: 2 ranks under mpirun print a row per dtype and size
# of MLBench's series (np.logspace(0, 8, 80) truncated, each size once) up to
# --max_size, and the report holds the same rows with nccl-tests' bandwidths
# (busbw = algbw x 2(n-1)/n) and MPI_Allreduce's figures beside ours; flags
# that leave nothing to time end with one line naming the flag and exit
# status 1.
#   comm_bench_test.sh COMM_BENCH
set -uo pipefail
bench=$(realpath "$1")
dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/comm_bench.XXXXXX")
cd "$dir"
export OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 TMPDIR=$dir
failed=0
fail() { echo "FAIL: $*"; failed=1; }

echo "== 2 ranks, f32 and f16 up to 1000 elements"
mpirun --oversubscribe -np 2 "$bench" --max_size=1000 --min_size=3 --repeats=3 --warmup=1 --output=two.json \
  >two.log 2>&1 || fail "2 ranks exited with $?"
cat two.log

python3 - <<'PY' || fail "the table and the report do not hold together"
import json, math
sizes = sorted({int(10 ** (8 * k / 79)) for k in range(80)})
sizes = [n for n in sizes if 3 <= n <= 1000]
lines = [l.split() for l in open("two.log") if l.split() and l.split()[0] in ("f32", "f16")]
assert [(l[0], int(l[1])) for l in lines] == [(d, n) for d in ("f32", "f16") for n in sizes], lines
r = json.load(open("two.json"))
c = r["config"]
assert (c["world_size"], c["repeats"], c["warmup"], c["backend"]) == (2, 3, 1, "mpi"), c
rows = r["extra"]["comm_bench"]["results"]
assert [(row["dtype"], row["elements"]) for row in rows] == [(d, n) for d in ("f32", "f16") for n in sizes]
for row in rows:
    width = 4 if row["dtype"] == "f32" else 2
    assert row["bytes"] == row["elements"] * width, row
    algbw = row["bytes"] / (row["median_us"] * 1e-6) / 1e9
    assert math.isclose(row["algbw_gbps"], algbw, rel_tol=1e-9), row
    assert math.isclose(row["busbw_gbps"], algbw * 2 * (2 - 1) / 2, rel_tol=1e-9), row
    assert 0 < row["median_us"] <= row["p95_us"], row
    assert math.isclose(row["ratio"], row["mpi_median_us"] / row["median_us"], rel_tol=1e-9), row
print("report ok:", len(rows), "rows")
PY

echo "== bad flags: one line, exit status 1, before any rank connects"
check_error() {  # expected-text flags...
  local want=$1; shift
  "$bench" --output=bad.json "$@" >err.log 2>&1
  local rc=$?
  cat err.log
  [ "$rc" = 1 ] || fail "$*: exit status $rc, want 1"
  [ "$(wc -l <err.log)" = 1 ] || fail "$*: more than one line"
  grep -q -- "$want" err.log || fail "$*: the error does not say '$want'"
  [ ! -e bad.json ] || fail "$*: a report was written"
}
check_error "--repeats=0: must be >= 1" --repeats=0
check_error "--warmup=-1: must be >= 0" --warmup=-1
check_error "--dtypes: names no dtype" --dtypes=
check_error "--dtypes: .*f8" --dtypes=f32,f8
check_error "--min_size=100 --max_size=10: no size of the series" --min_size=100 --max_size=10

[ "$failed" = 0 ] && echo PASS
exit "$failed"
