#!/usr/bin/env bash
# A task binary stands alone: copied into an empty folder outside the
# repository, it runs with no flags but a short length (its default config is
# compiled in), also as 2 ranks under mpirun started there; --config=FILE
# overrides the default; with output to a file the log holds plain lines (no
# carriage returns, no escape codes, whatever TERM says); and a bad flag or
# config file ends with a one-line error naming it and exit status 1, also a
# baseline report that rank 0 of two cannot read. logreg's default data is
# written once into the cache, not into each run's output directory.
#   standalone_test.sh LOGREG RESNET20 LSTM_LM RESNET50
set -uo pipefail
logreg_src=$1 resnet20_src=$2 lstm_lm_src=$3 resnet50_src=$4

dir=$(mktemp -d "${TEST_TMPDIR:-/tmp}/standalone.XXXXXX")
cp "$logreg_src" "$resnet20_src" "$lstm_lm_src" "$resnet50_src" "$dir/"
cd "$dir"
export XDG_CACHE_HOME="$dir/cache"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# Plain lines only: no \r, no ESC.
check_plain_log() {
  if grep -q $'\r\|\x1b' "$1"; then fail "$1 holds carriage returns or escape codes"; fi
}

echo "== logreg, one epoch, no config flag, TERM=xterm, output to a file"
TERM=xterm ./logreg --epochs=1 >logreg.log 2>&1 || fail "logreg exited with $?"
cat logreg.log
check_plain_log logreg.log
grep -q "epoch 1/1 done" logreg.log || fail "logreg.log has no epoch line"
[ -s output/report.json ] || fail "no output/report.json"
grep -q '"name": "logreg"' output/report.json || fail "the report's config is not logreg's default"
[ -s cache/trainstack/fashion_upper_body_v1/train.libsvm ] || fail "logreg's default data is not in the cache"
[ -e output/data ] && fail "logreg wrote its default data into output/"

echo "== logreg with a cache it cannot write: the error names the cache and how to choose another"
XDG_CACHE_HOME=/dev/null ./logreg --max_steps=1 --output_dir=out_nocache >nocache.log 2>&1
rc=$?
[ "$rc" = 1 ] || fail "logreg with an unwritable cache: exit status $rc, want 1"
grep -q "writing the default data into the cache (--set=cache_dir=DIR, or XDG_CACHE_HOME, to choose another): .*/dev/null/trainstack" nocache.log ||
  { cat nocache.log; fail "the error does not name the cache"; }

echo "== logreg, synthetic data of epsilon's shapes, 5 steps"
./logreg --synthetic --max_steps=5 --output_dir=outlr >logreg_synthetic.log 2>&1 || fail "logreg --synthetic exited with $?"
grep -q '"data": "synthetic: 400000 train and 100000 test rows of 2000 features' outlr/report.json ||
  fail "the logreg report does not name its synthetic data"

echo "== resnet20, synthetic data, 2 steps"
./resnet20 --synthetic --max_steps=2 --batch_size=8 --output_dir=out20 >resnet20.log 2>&1 || fail "resnet20 exited with $?"
cat resnet20.log
check_plain_log resnet20.log
grep -q '"name": "resnet20"' out20/report.json || fail "no resnet20 report"

echo "== resnet20 stopped by SIGTERM mid-run: a checkpoint and the way to resume it; the resume finishes"
./resnet20 --synthetic --max_steps=500 --batch_size=8 --set=progress_interval_seconds=0 --output_dir=outsig \
  --checkpoint_dir=ckptsig >sigterm.log 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q "step [1-9]" sigterm.log && break; sleep 0.1; done  # training has begun
kill -TERM "$pid"
wait "$pid"
rc=$?
tail -3 sigterm.log
[ "$rc" = 1 ] || fail "resnet20 after SIGTERM exited with $rc, not 1"
grep -q "stopped by signal 15 (Terminated) after step .* --resume continues it from ckptsig/run_state.ckpt" sigterm.log ||
  fail "the SIGTERM message does not say how to resume"
stopped_at=$(python3 -c "import json; print(json.load(open('outsig/report.json'))['run']['global_step'])")
[ "$stopped_at" -gt 0 ] && [ "$stopped_at" -lt 500 ] || fail "the stopped run's report says global step $stopped_at"
./resnet20 --synthetic --max_steps=$((stopped_at + 2)) --batch_size=8 --output_dir=outsig --checkpoint_dir=ckptsig \
  --resume >resumed.log 2>&1 || { cat resumed.log; fail "the resume after SIGTERM exited with $?"; }
python3 -c "import json,sys; r=json.load(open('outsig/report.json'))['run']; sys.exit(not r['resumed'] or r['global_step'] != $stopped_at + 2)" ||
  fail "the resumed report is not 2 steps past the stop"

echo "== lstm_lm, its default data (the fortunes corpus), a small model, 3 steps"
./lstm_lm --max_steps=3 --batch_size=4 --set='hidden_size=16,embedding_size=8' --output_dir=outlm >lstm_lm.log 2>&1 ||
  fail "lstm_lm exited with $?"
cat lstm_lm.log
check_plain_log lstm_lm.log
grep -q '"unit": "tokens"' outlm/report.json || fail "the lstm_lm report does not count tokens"
grep -q 'fortunes (/usr/share/games/fortunes)' outlm/report.json || fail "the lstm_lm report does not name its data"

echo "== resnet50, its default data (Fashion-MNIST as JPEGs, built in a cache), f16 mixed precision, 2 steps"
./resnet50 --max_steps=2 --batch_size=4 --dtype=f16 --num_workers=1 \
  --set='image_size=32,eval_resize=32,jpeg_size=32,jpeg_limit_per_class=2' --output_dir=out50 >resnet50.log 2>&1 ||
  fail "resnet50 exited with $?"
cat resnet50.log
check_plain_log resnet50.log
grep -q 'JPEG folder .*fashion-mnist-jpeg-32px' out50/report.json || fail "the resnet50 report does not name its JPEG folder"
grep -q '"skipped_steps"' out50/report.json || fail "the resnet50 report has no mixed-precision section"
ls "$dir"/cache/trainstack/*/train/0_t-shirt_top/*.JPEG >/dev/null || fail "no JPEG folder in the cache"

echo "== --config=FILE overrides the compiled-in default"
cat >short.textproto <<'CONFIG'
name: "logreg"
seed: 7
epochs: 1
batch_size: 50
sgd { lr: 2 }
target_metric: "accuracy"
target_value: 0.5
CONFIG
./logreg --config=short.textproto --output_dir=out_config >config.log 2>&1 || fail "logreg --config exited with $?"
grep -q '"batch_size": 50' out_config/report.json || fail "--config's batch_size is not in the report"

echo "== errors: one line naming the file or flag, exit status 1"
./logreg --config=missing.textproto >missing.log 2>&1
rc=$?
cat missing.log
[ "$rc" = 1 ] || fail "missing config: exit status $rc, want 1"
grep -q "missing.textproto" missing.log || fail "the error does not name missing.textproto"
echo 'name: "logreg" epochs: -3' >bad.textproto
./logreg --config=bad.textproto >bad.log 2>&1
rc=$?
cat bad.log
[ "$rc" = 1 ] || fail "bad config: exit status $rc, want 1"
grep -q "epochs" bad.log || fail "the error does not name the field epochs"
./logreg --synthetic --set=l2=-1 >l2.log 2>&1
rc=$?
cat l2.log
[ "$rc" = 1 ] || fail "logreg.l2 = -1: exit status $rc, want 1"
grep -q "logreg.l2 = -1" l2.log || fail "the error does not name logreg.l2"

echo "== --help lists the task flags and the collectives' (absl's default matched none of our files)"
./logreg --help >help.log 2>&1
cat help.log
for flag in max_steps deterministic set collectives_timeout; do
  grep -q -- "-$flag" help.log || fail "logreg --help does not list --$flag"
done
grep -q "No flags matched" help.log && fail "logreg --help matched no flags"

if command -v mpirun >/dev/null; then
  echo "== 2 ranks under mpirun, started from this folder"
  export OMPI_MCA_btl=self,vader OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export TMPDIR=$dir
  mpirun --oversubscribe -np 2 ./logreg --max_steps=20 --output_dir=out_mpi >mpi.log 2>&1 ||
    fail "mpirun logreg exited with $?"
  cat mpi.log
  check_plain_log mpi.log
  python3 -c "import json,sys; sys.exit(json.load(open('out_mpi/report.json'))['world']['size'] != 2)" || fail "the mpirun report is not from 2 ranks"

  echo "== logreg's default data where rank 1's cache is not rank 0's (another machine's disk): rank 1 writes its own"
  mpirun --oversubscribe -np 1 ./logreg --max_steps=2 --output_dir=out_caches : \
    -np 1 env XDG_CACHE_HOME="$dir/cache1" ./logreg --max_steps=2 --output_dir=out_caches >caches.log 2>&1 ||
    fail "mpirun logreg with two caches exited with $?"
  [ -s cache1/trainstack/fashion_upper_body_v1/test.libsvm ] || { cat caches.log; fail "rank 1 did not write its cache"; }
  rm -rf cache1

  echo "== lstm_lm as 2 ranks (DDP over MPI, each reading its rows of the stream)"
  mpirun --oversubscribe -np 2 ./lstm_lm --max_steps=3 --batch_size=4 --set='hidden_size=16,embedding_size=8' \
    --output_dir=out_lm_mpi >lm_mpi.log 2>&1 || fail "mpirun lstm_lm exited with $?"
  cat lm_mpi.log
  python3 -c "import json,sys; r=json.load(open('out_lm_mpi/report.json')); sys.exit(r['world']['size'] != 2 or r['run']['global_step'] != 3)" ||
    fail "the mpirun lstm_lm report is not 3 steps of 2 ranks"

  echo "== resnet20 as 2 ranks in mixed precision: f16 gradients reduced in f16, bf16 ones in f32"
  for precision in "f16" "bf16 --set=reduce_gradients_in_f32=true"; do
    # shellcheck disable=SC2086
    mpirun --oversubscribe -np 2 ./resnet20 --synthetic --max_steps=3 --batch_size=8 --set=depth=8,warmup_steps=1 \
      --num_workers=0 \
      --dtype=$precision --output_dir=out_mixed_mpi >mixed_mpi.log 2>&1 || fail "mpirun resnet20 --dtype=$precision exited with $?"
    python3 -c "import json,sys; r=json.load(open('out_mixed_mpi/report.json')); t=r['throughput']; sys.exit(r['world']['size'] != 2 or r['run']['global_step'] != 3 or 'mixed_precision' not in r['extra'] or t['samples_per_s'] is None or t['global_samples_per_s'] != 2 * t['samples_per_s'])" ||
      { cat mixed_mpi.log; fail "the mpirun resnet20 --dtype=$precision report is not 3 mixed-precision steps of 2 ranks (and twice one rank's samples/s in all)"; }
  done

  echo "== 2 ranks stopped by SIGUSR1 through mpirun: one line (rank 0's) naming the checkpoint"
  mpirun --oversubscribe -np 2 ./resnet20 --synthetic --max_steps=100000 --batch_size=4 --set=depth=8 \
    --num_workers=0 --checkpoint_dir=ck_mpi --output_dir=out_stop_mpi >stop_mpi.log 2>&1 &
  launcher=$!
  # Signal only once training runs (the handlers are installed by then): DDP
  # shows its first progress line at step 16.
  for _ in $(seq 120); do
    grep -q "step" stop_mpi.log && break
    sleep 0.5
  done
  kill -USR1 "$launcher"
  wait "$launcher"
  rc=$?
  cat stop_mpi.log
  [ "$rc" != 0 ] || fail "mpirun resnet20 stopped by SIGUSR1 exited with 0"
  lines=$(grep -c "stopped by signal" stop_mpi.log)
  [ "$lines" = 1 ] || fail "$lines lines say the run stopped, want rank 0's alone"
  grep -q "resume continues it from ck_mpi/run_state.ckpt" stop_mpi.log || fail "the stop line does not name the checkpoint"

  echo "== 2 ranks, a baseline report rank 0 cannot read: both ranks stop at once, naming it"
  # The limit tells a hang from an error; instrumented builds (TS_SANITIZERS)
  # take minutes to start two ranks.
  hang_limit=$([ -n "${TS_SANITIZERS:-}" ] && echo 600 || echo 60)
  timeout "$hang_limit" mpirun --oversubscribe -np 2 ./logreg --max_steps=20 --baseline_report=missing_baseline.json \
    --output_dir=out_bad_baseline >bad_baseline.log 2>&1
  rc=$?
  cat bad_baseline.log
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "mpirun with a missing baseline: exit status $rc (124: it hung)"
  grep -q "missing_baseline.json" bad_baseline.log || fail "the error does not name missing_baseline.json"
fi

[ "$failed" = 0 ] && echo PASS
exit "$failed"
