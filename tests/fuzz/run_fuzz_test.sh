#!/usr/bin/env bash
# Runs one fuzz target for a few seconds from its seed corpus, with the same
# flags under either main: fuzz_driver (gcc) or libFuzzer (--config=fuzz).
# libFuzzer adds new inputs to the first corpus dir, so that is a scratch dir.
set -euo pipefail
fuzzer=$1
seeds=$2
scratch="${TEST_TMPDIR:-$(mktemp -d)}/corpus"
mkdir -p "$scratch"
# ASan (--config=sanitize or fuzz) should abort so the crash handler saves the input.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}abort_on_error=1"
cd "${TEST_UNDECLARED_OUTPUTS_DIR:-.}" 2>/dev/null || true
exec "$OLDPWD/$fuzzer" -max_total_time=3 -seed=1 -runs=2000000 -rss_limit_mb=2048 "$scratch" "$OLDPWD/$seeds"
