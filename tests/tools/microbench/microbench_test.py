"""tools/microbench: the Mann-Whitney U test on samples whose answer is known
(also 8 against 3000 values, exactly), the smallest p-value a sample size
allows, `compare`'s table against a golden output (plain text when
redirected, exit status 1 on a significant slowdown past the threshold, and
on a slowdown past it that too few repetitions cannot test), and one clear
line with exit status 1 for a missing file, a report of the wrong kind or of
the wrong shape; `run` on fake Google Benchmark binaries (a --filter that
matches nothing in one target skips it) and its repetitions floor; the same
for `ratios` on saved runs (a ratio twice the baseline's fails, one within
the tolerance passes, a pair missing from the run is reported and fails),
its choice of the baseline run by CPU, which pairs the CI subset holds, and
that each repetition of a paired benchmark is a process of its own;
that the build before measuring shows Bazel's own progress (and stdout) on
stderr, on a fake bazel, leaving stdout to the table."""
import copy
import itertools
import json
import math
import os
import stat
import tempfile
import unittest

from tests.tools import tool_module

HERE = os.path.dirname(os.path.abspath(__file__))


mb = tool_module.load("microbench")


class MannWhitneyTest(unittest.TestCase):
    # scipy.stats.mannwhitneyu's documented example (males vs females):
    # U = 17, exact p = 0.1111..., asymptotic p = 0.11134688653314041.
    MALES = [19, 22, 16, 29, 24]
    FEMALES = [20, 11, 17, 12]

    def test_exact_matches_scipy(self):
        u, p = mb.mann_whitney_u(self.MALES, self.FEMALES)
        self.assertEqual(u, 17)
        self.assertAlmostEqual(p, 1 / 9, places=12)

    def test_asymptotic_matches_scipy(self):
        u, p = mb.mann_whitney_u(self.MALES, self.FEMALES, method="asymptotic")
        self.assertEqual(u, 17)
        self.assertAlmostEqual(p, 0.11134688653314041, places=12)

    def test_fully_separated_samples(self):
        # Every arrangement but the two extreme ones is less extreme:
        # p = 2 / C(10, 5).
        _, p = mb.mann_whitney_u([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
        self.assertAlmostEqual(p, 2 / 252, places=12)

    def test_identical_samples_are_not_different(self):
        _, p = mb.mann_whitney_u([3.0] * 5, [3.0] * 5)
        self.assertEqual(p, 1.0)

    def test_asymptotic_tracks_exact_on_larger_samples(self):
        # Near the 5% level, where the verdict is decided: exact p 0.0472.
        x = [i * 1.0 for i in range(25)]
        y = [i + 4.5 for i in range(25)]
        _, exact = mb.mann_whitney_u(x, y, method="exact")
        _, normal = mb.mann_whitney_u(x, y)  # 25 per side: the normal path
        self.assertAlmostEqual(exact, 0.047161706806839204, places=12)
        self.assertAlmostEqual(normal, exact, delta=0.03 * exact)

    def test_auto_chooses_as_scipy_does(self):
        # scipy.stats.mannwhitneyu(x, y, alternative="two-sided") in SciPy
        # 1.17: 9 values on each side take the normal approximation (exact
        # would say 0.0939), 5 against 30 the exact count (normal: 0.1949).
        _, p = mb.mann_whitney_u([i * 1.0 for i in range(9)], [i + 2.5 for i in range(9)])
        self.assertAlmostEqual(p, 0.0933976745287926, places=12)
        _, p = mb.mann_whitney_u([1.5, 7.5, 11.5, 20.5, 3.5], [float(i) for i in range(30)])
        self.assertAlmostEqual(p, 0.20158209911530592, places=12)

    def test_ties_share_ranks(self):
        self.assertEqual(mb._ranks([5, 1, 5, 3]), [3.5, 1, 3.5, 2])

    def test_exact_counts_every_arrangement(self):
        # P(U <= u) by listing every placement of the x's among 4 + 5 values.
        n1, n2 = 4, 5
        us = []
        for xs in itertools.combinations(range(n1 + n2), n1):
            us.append(sum(1 for x in xs for y in set(range(n1 + n2)) - set(xs) if y < x))
        for u in range(-1, n1 * n2 + 1):
            self.assertEqual(mb._exact_u_cdf(u, n1, n2), sum(1 for v in us if v <= u) / len(us), u)
            self.assertEqual(mb._exact_u_cdf(u, n2, n1), mb._exact_u_cdf(u, n1, n2), u)

    def test_exact_on_a_large_sample_without_recursion(self):
        # 8 values against 3000 is scipy's exact test too (its 'auto' rule):
        # scipy.stats.mannwhitneyu 1.17.1 gives U = 11607, p = 0.8752476385313541.
        x = [100.5, 400.5, 800.5, 1200.5, 1600.5, 2000.5, 2500.5, 2999.5]
        u, p = mb.mann_whitney_u(x, [float(i) for i in range(3000)])
        self.assertEqual(u, 11607)
        self.assertAlmostEqual(p, 0.8752476385313541, places=12)
        _, p = mb.mann_whitney_u(range(8), range(8, 3008))
        self.assertAlmostEqual(p / (2 / math.comb(3008, 8)), 1.0, places=12)

    def test_smallest_p_and_the_repetitions_it_needs(self):
        # Exact and two-sided: 2 / C(n1 + n2, n1) at best.
        self.assertAlmostEqual(mb.smallest_p(3, 3), 2 / 20, places=15)
        self.assertAlmostEqual(mb.smallest_p(4, 4), 2 / 70, places=15)
        self.assertEqual(mb.smallest_p(1, 1), 1.0)
        self.assertEqual(mb.repetitions_needed(0.05), 4)
        self.assertEqual(mb.repetitions_needed(0.01), 5)
        self.assertEqual(mb.MIN_RUN_REPETITIONS, mb.repetitions_needed(0.05))


def run_tool(*args):
    return tool_module.run("microbench", *args)


def load_fixture(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as f:
        return json.load(f)


def write_json(directory, name, value):
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f)
    return path


def with_repetitions(report, n, scale=1.0):
    """The report with the first n repetitions of each benchmark, times scaled."""
    report = copy.deepcopy(report)
    for target, runs in report["targets"].items():
        kept, seen = [], {}
        for run_ in runs:
            seen[run_["name"]] = seen.get(run_["name"], 0) + 1
            if seen[run_["name"]] <= n:
                kept.append(dict(run_, real_time=run_["real_time"] * scale))
        report["targets"][target] = kept
    return report


class CompareTest(unittest.TestCase):
    def test_golden_table_and_exit_status(self):
        result = run_tool("compare", os.path.join(HERE, "base.json"), os.path.join(HERE, "new.json"))
        with open(os.path.join(HERE, "compare.golden"), encoding="utf-8") as f:
            golden = f.read()
        self.assertEqual(result.stdout, golden)
        self.assertNotIn("\033[", result.stdout, "colour codes in redirected output")
        self.assertEqual(result.returncode, 1, "BM_Slow is 20% slower, significantly")

    def test_a_looser_threshold_passes(self):
        result = run_tool("compare", os.path.join(HERE, "base.json"), os.path.join(HERE, "new.json"),
                          "--threshold", "25")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("no significant slowdown past the threshold", result.stdout)

    def test_a_benchmark_that_errored_fails(self):
        # BM_Same errors in the new run (its times gone); BM_Slow skips for
        # want of a GPU, which only notes it.
        with open(os.path.join(HERE, "new.json"), encoding="utf-8") as f:
            new = json.load(f)
        runs = new["targets"]["//tests/x:x_benchmark"]
        new["targets"]["//tests/x:x_benchmark"] = [r for r in runs if r["name"] not in ("BM_Same", "BM_Slow")]
        new["errors"] = {"//tests/x:x_benchmark": {"BM_Same": "save failed", "BM_Slow": "no CUDA device: none"}}
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "new.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(new, f)
            result = run_tool("compare", os.path.join(HERE, "base.json"), path, "--threshold", "25")
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertRegex(result.stdout, r"BM_Same +10 us +- +error in new")
        self.assertRegex(result.stdout, r"BM_Slow +100 us +- +skipped in new")
        self.assertIn("1 benchmark(s) of the base failed in the new run:\n"
                      "  //tests/x:x_benchmark BM_Same: save failed\n", result.stdout)

    def test_too_few_repetitions_cannot_pass_a_2x_slowdown(self):
        # 3 repetitions a side: p can go no lower than 2 / C(6, 3) = 0.1.
        base = with_repetitions(load_fixture("base.json"), 3)
        with tempfile.TemporaryDirectory() as d:
            base_path = write_json(d, "base.json", base)
            slower = write_json(d, "slower.json", with_repetitions(base, 3, scale=2.0))
            same = write_json(d, "same.json", with_repetitions(base, 3, scale=1.01))
            result = run_tool("compare", base_path, slower)
            self.assertEqual(result.returncode, 1, result.stdout)
            self.assertRegex(result.stdout, r"BM_Slow +100 us +200 us +\+100\.0% +n/a \(too few repetitions\) +"
                             r"slower, untested")
            self.assertIn("benchmark(s) slower by more than 5% with too few repetitions to test "
                          "(p < 0.05 needs 4 per side: tools/microbench run --repetitions 4 or more):\n"
                          "  //tests/x:x_benchmark BM_Slow (3 and 3 repetitions)\n", result.stdout)
            self.assertNotIn("no significant slowdown", result.stdout)
            # Within the threshold: untested, said so, and no failure.
            result = run_tool("compare", base_path, same)
            self.assertEqual(result.returncode, 0, result.stdout)
            self.assertRegex(result.stdout, r"BM_Same +10 us +10.1 us +\+1\.0% +n/a \(too few repetitions\) +untested")

    def test_a_base_of_zero_time_makes_the_new_time_slower(self):
        base = load_fixture("base.json")
        for run_ in base["targets"]["//tests/x:x_benchmark"]:
            if run_["name"] == "BM_Slow":
                run_["real_time"] = 0
        with tempfile.TemporaryDirectory() as d:
            result = run_tool("compare", write_json(d, "base.json", base), os.path.join(HERE, "new.json"))
        self.assertEqual(result.returncode, 1, result.stdout)
        self.assertRegex(result.stdout, r"BM_Slow +0 ns +120 us +\+inf% +0\.\d+ +slower")
        self.assertIn("significantly slower by more than 5%:\n  //tests/x:x_benchmark BM_Slow\n", result.stdout)

    def test_equal_medians_are_no_change_however_small_p(self):
        # 9 repetitions a side, the new ones lower at the tails but with the
        # base's median: the U test finds them different (p < 0.05), yet a
        # median that did not move is no faster.
        def with_times(report, times):
            report = copy.deepcopy(report)
            template = next(r for r in report["targets"]["//tests/x:x_benchmark"] if r["name"] == "BM_Same")
            report["targets"]["//tests/x:x_benchmark"] = [
                dict(template, repetitions=len(times), repetition_index=i, real_time=t, cpu_time=t)
                for i, t in enumerate(times)]
            return report
        fixture = load_fixture("base.json")
        with tempfile.TemporaryDirectory() as d:
            base = write_json(d, "base.json", with_times(fixture, [10] * 5 + [20] * 4))
            new = write_json(d, "new.json", with_times(fixture, [1] * 4 + [10] * 5))
            result = run_tool("compare", base, new)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertRegex(result.stdout, r"BM_Same +10 us +10 us +\+0\.0% +0\.0[0-4]\d* +~")

    def test_fewer_than_9_repetitions_warn(self):
        result = run_tool("compare", os.path.join(HERE, "base.json"), os.path.join(HERE, "new.json"))
        self.assertIn("warning: 5 repetitions per side at the fewest: results unreliable (9+ recommended",
                      result.stdout)
        base = load_fixture("base.json")
        for runs in base["targets"].values():
            runs.extend(copy.deepcopy(runs))  # 10 each
        with tempfile.TemporaryDirectory() as d:
            path = write_json(d, "base10.json", base)
            result = run_tool("compare", path, path)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertNotIn("warning", result.stdout)

    def test_a_report_of_the_wrong_shape_is_one_line_naming_file_and_field(self):
        target = "//tests/x:x_benchmark"

        def without(key):
            return lambda r: r.pop(key)

        def set_run(key, value):
            return lambda r: r["targets"][target][0].__setitem__(key, value)

        cases = [
            (without("targets"), 'no "targets"'),
            (without("machine"), 'no "machine"'),
            (lambda r: r.__setitem__("machine", "vm"), '"machine" is "vm", not an object'),
            (lambda r: r["targets"][target][0].pop("real_time"), f'no "targets.{target}[0].real_time"'),
            (set_run("real_time", "100"), f'"targets.{target}[0].real_time" is "100", not a number'),
            (set_run("time_unit", "h"), f'"targets.{target}[0].time_unit" is "h"'),
            (set_run("run_name", ["BM_Slow"]), f'"targets.{target}[0].run_name" is ["BM_Slow"]'),
            (lambda r: r.__setitem__("errors", ["boom"]), '"errors" is ["boom"], not an object'),
            (lambda r: r.__setitem__("errors", {target: "boom"}), f'"errors.{target}" is "boom"'),
            (lambda r: r.__setitem__("targets", {target: {}}), f'"targets.{target}" is {{}}, not a list'),
        ]
        with tempfile.TemporaryDirectory() as d:
            for change, fragment in cases:
                report = load_fixture("new.json")
                change(report)
                path = write_json(d, "bad.json", report)
                for args in ((os.path.join(HERE, "base.json"), path), (path, os.path.join(HERE, "base.json"))):
                    with self.subTest(fragment=fragment, args=args):
                        result = run_tool("compare", *args)
                        self.assertEqual(result.returncode, 1, result.stderr)
                        self.assertEqual(result.stdout, "")
                        self.assertTrue(result.stderr.startswith(f"microbench: {path}: {fragment}"), result.stderr)
                        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)

    def test_a_threshold_that_is_no_number_is_refused(self):
        # NaN compares false with every change: it passed a 2x slowdown.
        for value in ("nan", "inf", "-1"):
            result = run_tool("compare", os.path.join(HERE, "base.json"), os.path.join(HERE, "new.json"),
                              f"--threshold={value}")
            self.assertEqual(result.returncode, 1, result.stdout)
            self.assertIn(f"--threshold={value}: must be a finite percentage >= 0", result.stderr)

    def test_bad_input_is_one_line_and_status_1(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "missing.json")
            wrong = os.path.join(d, "task_report.json")
            with open(wrong, "w", encoding="utf-8") as f:
                json.dump({"format": "trainstack.report.v1"}, f)
            binary = os.path.join(d, "events.out.tfevents")  # a TensorBoard file, say
            with open(binary, "wb") as f:
                f.write(b"\xff\xfe\x00\x01 not text")
            deep = os.path.join(d, "deep.json")  # past the JSON reader's recursion limit
            with open(deep, "w", encoding="utf-8") as f:
                f.write("[" * 100000 + "]" * 100000)
            for path, fragment in ((missing, "cannot read"), (wrong, "not a microbench report"),
                                   (binary, "not UTF-8 text"), (deep, "nests too deep")):
                result = run_tool("compare", os.path.join(HERE, "base.json"), path)
                self.assertEqual(result.returncode, 1)
                self.assertEqual(result.stdout, "")
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(fragment, result.stderr)
                self.assertIn(path, result.stderr)



# A Google Benchmark binary as far as `run` sees it: its flags, its JSON in
# --benchmark_out, and for a filter that matches nothing what Google
# Benchmark 1.7 does (says so, exits 0, leaves --benchmark_out empty).
FAKE_BENCHMARK = r'''#!/usr/bin/env python3
import json, re, sys
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:])
names = [n for n in NAMES if re.search(flags.get("benchmark_filter", ""), n)]
with open(flags["benchmark_out"], "w") as out:
    if not names:
        print("Failed to match any benchmarks against regex: " + flags["benchmark_filter"], file=sys.stderr)
        sys.exit(0)
    json.dump({"benchmarks": [{"name": n, "run_name": n, "run_type": "iteration", "real_time": 1.0 + i,
                               "time_unit": "ns", "iterations": 10}
                              for n in names for i in range(int(flags["benchmark_repetitions"]))]}, out)
'''


class RunTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.binaries = []
        for name, benchmarks in (("a_benchmark", ["BM_Add/64", "BM_Sum/64"]), ("b_benchmark", ["BM_Conv/1"])):
            path = os.path.join(self.tmp.name, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(FAKE_BENCHMARK.replace("NAMES", repr(benchmarks), 1))
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
            self.binaries.append(path)
        self.out = os.path.join(self.tmp.name, "out.json")

    def tearDown(self):
        self.tmp.cleanup()

    def test_a_target_the_filter_does_not_match_is_skipped(self):
        result = run_tool("run", *self.binaries, "--filter", "BM_Sum", "--out", self.out, "--min_time", "0.01")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn(f"microbench: {self.binaries[1]}: no benchmark matches --filter 'BM_Sum'; skipped",
                      result.stderr)
        report = mb.load(self.out)
        self.assertEqual(list(report["targets"]), [self.binaries[0]])
        self.assertEqual({r["name"] for r in report["targets"][self.binaries[0]]}, {"BM_Sum/64"})
        self.assertEqual(len(report["targets"][self.binaries[0]]), 5)

    def test_a_filter_that_matches_no_target_fails(self):
        result = run_tool("run", *self.binaries, "--filter", "BM_Matmul", "--out", self.out)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stderr.splitlines()[-1],
                         "microbench: no benchmark of the 2 target(s) matches --filter 'BM_Matmul'")
        self.assertFalse(os.path.exists(self.out))

    def test_fewer_repetitions_than_the_test_needs_are_refused(self):
        result = run_tool("run", *self.binaries, "--repetitions", "3", "--out", self.out)
        self.assertEqual(result.returncode, 1)
        self.assertIn("microbench: --repetitions=3: must be >= 4", result.stderr)
        self.assertFalse(os.path.exists(self.out))
        result = run_tool("run", self.binaries[1], "--repetitions", "4", "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)


# A paired benchmark whose ratio is the number of processes started so far
# (counted in a file beside it), and which records each start's
# --benchmark_repetitions.
FAKE_PAIRED_BENCHMARK = r'''#!/usr/bin/env python3
import json, os, sys
flags = dict(a[2:].split("=", 1) for a in sys.argv[1:])
starts = os.path.join(os.path.dirname(os.path.abspath(__file__)), "starts")
with open(starts, "a") as f:
    f.write(flags["benchmark_repetitions"] + "\n")
with open(starts) as f:
    ratio = float(len(f.readlines()))
with open(flags["benchmark_out"], "w") as out:
    json.dump({"benchmarks": [{"name": "BM_AVsB/8", "run_name": "BM_AVsB/8", "run_type": "iteration",
                               "real_time": 1.0, "time_unit": "ns", "iterations": 10, "ratio": ratio}
                              for _ in range(int(flags["benchmark_repetitions"]))]}, out)
'''


class BenchmarkPairsTest(unittest.TestCase):
    def test_one_process_per_repetition(self):
        with tempfile.TemporaryDirectory() as d:
            binary = os.path.join(d, "pair_benchmark")
            with open(binary, "w", encoding="utf-8") as f:
                f.write(FAKE_PAIRED_BENCHMARK)
            os.chmod(binary, os.stat(binary).st_mode | stat.S_IXUSR)
            ratios = mb.BenchmarkPairs(binary, "Vs").measure(repetitions=3, min_time=0.01)
            self.assertEqual(ratios, {f"{binary} BM_AVsB/8": [1.0, 2.0, 3.0]})
            with open(os.path.join(d, "starts"), encoding="utf-8") as f:
                self.assertEqual(f.read().split(), ["1", "1", "1"])


def ratios_file(runs):
    return {"format": mb.RATIOS_FORMAT, "runs": runs}


def ratios_run(cpu, date, ratios, subset="ci"):
    return {"date": date, "machine": {"cpu_family_model": cpu}, "subset": subset,
            "ratios": {pair: {"median": value} for pair, value in ratios.items()}}


MATMUL_1024 = "//tests/tensor:ops_benchmark BM_CpuMatmulVsSgemm/1024/manual_time"
MATMUL_4096 = "//tests/tensor:ops_benchmark BM_CpuMatmulVsSgemm/4096/manual_time"


class CompareRatiosTest(unittest.TestCase):
    def verdicts(self, base, now, tolerance=30, covers=lambda pair: True):
        return {row[0]: row[4] for row in mb.compare_ratios(base, now, tolerance, covers)}

    def test_twice_the_baseline_is_worse(self):
        self.assertEqual(self.verdicts({"p": 1.0}, {"p": 2.0}), {"p": "worse"})

    def test_the_tolerance_is_the_boundary(self):
        self.assertEqual(self.verdicts({"p": 1.0}, {"p": 1.29}), {"p": "~"})
        self.assertEqual(self.verdicts({"p": 1.0}, {"p": 1.31}), {"p": "worse"})
        self.assertEqual(self.verdicts({"p": 1.0}, {"p": 0.69}), {"p": "better"})

    def test_change_is_in_percent_of_the_baseline(self):
        [(_, base, now, change, _)] = mb.compare_ratios({"p": 0.8}, {"p": 1.0}, 30, lambda pair: True)
        self.assertEqual((base, now), (0.8, 1.0))
        self.assertAlmostEqual(change, 25.0)

    def test_missing_only_when_the_subset_covers_the_pair(self):
        verdicts = self.verdicts({"a": 1.0, "b": 1.0}, {}, covers=lambda pair: pair == "a")
        self.assertEqual(verdicts, {"a": "missing"})

    def test_a_pair_without_baseline_is_new(self):
        self.assertEqual(self.verdicts({}, {"p": 1.0}), {"p": "new"})

    def test_ci_subset_covers_its_pairs_only(self):
        def covered(pair):
            return any(pairs.covers(pair) for pairs in mb.SUBSETS["ci"])

        self.assertTrue(covered(MATMUL_1024))
        self.assertTrue(covered("//tests/tensor:ops_benchmark BM_CpuAddVsMemcpy/1048576/manual_time"))
        self.assertTrue(covered("//tests/tensor:ops_benchmark BM_CpuBf16ReluVsMemcpy/1048576/manual_time"))
        self.assertTrue(covered("//tasks/comm_bench allreduce_f32/943373"))
        self.assertFalse(covered(MATMUL_4096))
        self.assertFalse(covered("//tests/tensor:ops_benchmark BM_CpuSumVsMemcpy/16777216/manual_time"))
        self.assertFalse(covered("//tests/tensor:ops_benchmark BM_CpuAddVsMemcpy/16777216/manual_time"))
        self.assertFalse(covered("//tests/tensor:ops_benchmark BM_CudaAddVsMemcpy/16777216/manual_time"))
        self.assertFalse(covered("//tasks/comm_bench allreduce_f16/943373"))
        self.assertFalse(covered("//tasks/comm_bench allreduce_f32/11236"))


class BaselineRunTest(unittest.TestCase):
    INTEL = ratios_run("GenuineIntel/6/167", "2026-11-24T21:00:00+00:00", {MATMUL_1024: 1.0})
    INTEL_ALL = ratios_run("GenuineIntel/6/167", "2026-11-24T22:00:00+00:00", {MATMUL_4096: 1.0}, subset="all")
    AMD = ratios_run("AuthenticAMD/25/17", "2026-11-25T09:00:00+00:00", {MATMUL_1024: 1.1})
    RUNS = [INTEL, INTEL_ALL, AMD]

    def now(self, cpu, subset="ci"):
        return ratios_run(cpu, "2026-11-26T10:00:00+00:00", {}, subset)

    def test_the_run_of_this_cpu_and_subset(self):
        self.assertEqual(mb.baseline_for(self.RUNS, self.now("GenuineIntel/6/167")), (self.INTEL, True))
        self.assertEqual(mb.baseline_for(self.RUNS, self.now("GenuineIntel/6/167", "all")), (self.INTEL_ALL, True))

    def test_else_the_latest_of_the_subset(self):
        self.assertEqual(mb.baseline_for(self.RUNS, self.now("GenuineIntel/6/143")), (self.AMD, False))
        self.assertEqual(mb.baseline_for(self.RUNS, self.now("AuthenticAMD/25/17", "all")), (self.INTEL_ALL, False))

    def test_never_another_subset(self):
        self.assertEqual(mb.baseline_for([self.INTEL], self.now("GenuineIntel/6/167", "all")), (None, False))

    def test_writing_replaces_the_run_of_this_cpu_and_subset_only(self):
        refreshed = ratios_run("GenuineIntel/6/167", "2026-11-26T10:00:00+00:00", {MATMUL_1024: 0.9})
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ratios.json")
            mb.write_baseline(path, self.RUNS, refreshed)
            self.assertEqual(mb.load_ratios(path), [self.INTEL_ALL, self.AMD, refreshed])


def run_ratios(baseline, saved, *args):
    return run_tool("ratios", "--baseline", baseline, "--from", saved, *args)


class RatiosTest(unittest.TestCase):
    BASELINE = os.path.join(HERE, "ratios_baseline.json")
    NEW = os.path.join(HERE, "ratios_new.json")

    def test_golden_table_and_exit_status(self):
        result = run_ratios(self.BASELINE, self.NEW, "--tolerance", "30")
        with open(os.path.join(HERE, "ratios.golden"), encoding="utf-8") as f:
            golden = f.read()
        self.assertEqual(result.stdout, golden)
        self.assertNotIn("\033[", result.stdout, "colour codes in redirected output")
        self.assertEqual(result.returncode, 1, "matmul 1024 is twice as slow and allreduce 1191103 is missing")

    def test_within_the_tolerance_passes(self):
        with tempfile.TemporaryDirectory() as d:
            baseline = os.path.join(d, "baseline.json")
            saved = os.path.join(d, "now.json")
            for path, ratio in ((baseline, 1.0), (saved, 1.25)):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(ratios_file([ratios_run("GenuineIntel/6/167", "2026-11-24", {MATMUL_1024: ratio})]), f)
            result = run_ratios(baseline, saved, "--tolerance", "30")
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("+25.0%", result.stdout)
        self.assertIn("no pair worse than the baseline by more than 30%", result.stdout)

    def test_another_cpu_is_compared_with_a_note(self):
        with open(self.NEW, encoding="utf-8") as f:
            new = json.load(f)
        new["runs"][0]["machine"]["cpu_family_model"] = "GenuineIntel/6/143"
        with tempfile.TemporaryDirectory() as d:
            saved = os.path.join(d, "now.json")
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(new, f)
            result = run_ratios(self.BASELINE, saved)
        self.assertIn("note: the baseline has no run on this CPU (GenuineIntel/6/143)", result.stdout)
        self.assertIn("(AuthenticAMD/25/17)", result.stdout.splitlines()[0], "the latest run is the baseline")

    def test_another_cpu_tolerates_more_but_not_twice_as_slow(self):
        with tempfile.TemporaryDirectory() as d:
            baseline = os.path.join(d, "baseline.json")
            with open(baseline, "w", encoding="utf-8") as f:
                json.dump(ratios_file([ratios_run("GenuineIntel/6/167", "2026-11-24", {MATMUL_1024: 1.0})]), f)
            codes = {}
            for ratio in (1.45, 2.0):
                saved = os.path.join(d, "now.json")
                with open(saved, "w", encoding="utf-8") as f:
                    json.dump(ratios_file([ratios_run("AuthenticAMD/25/17", "2026-11-25", {MATMUL_1024: ratio})]), f)
                result = run_ratios(baseline, saved)
                codes[ratio] = result.returncode
                self.assertIn("so the tolerance is 60%", result.stdout)
        self.assertEqual(codes, {1.45: 0, 2.0: 1}, "a CPU's difference passes, twice as slow fails")

    def test_a_baseline_without_the_subset_is_one_line_and_status_1(self):
        with tempfile.TemporaryDirectory() as d:
            saved = os.path.join(d, "now.json")
            with open(saved, "w", encoding="utf-8") as f:
                json.dump(ratios_file([ratios_run("GenuineIntel/6/167", "2026-11-26", {}, subset="all")]), f)
            result = run_ratios(self.BASELINE, saved)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        self.assertEqual(result.stderr.strip(), f"microbench: {self.BASELINE} has no run of subset all: "
                         "record one with --write-baseline")

    def test_from_a_saved_run_of_another_subset_is_refused(self):
        # The run in ratios_new.json is of the ci subset.
        result = run_ratios(self.BASELINE, self.NEW, "--subset", "all")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        self.assertEqual(result.stderr.strip(), f"microbench: --subset all: {self.NEW} holds a run of subset ci; "
                         "leave --subset out with --from")
        result = run_ratios(self.BASELINE, self.NEW, "--subset", "ci", "--tolerance", "30")
        self.assertIn("subset ci", result.stdout)

    def test_a_run_of_the_wrong_shape_is_one_line_naming_file_and_field(self):
        cases = [
            (lambda run_: run_.__setitem__("machine", "vm"), '"runs[0].machine" is "vm", not an object'),
            (lambda run_: run_["machine"].__setitem__("cpu_family_model", 6), '"runs[0].machine.cpu_family_model" is 6'),
            (lambda run_: run_.__setitem__("date", 20261126), '"runs[0].date" is 20261126, not a string'),
        ]
        with tempfile.TemporaryDirectory() as d:
            for change, fragment in cases:
                run_ = ratios_run("GenuineIntel/6/167", "2026-11-26", {MATMUL_1024: 1.0})
                change(run_)
                path = write_json(d, "bad.json", ratios_file([run_]))
                for baseline, saved in ((path, self.NEW), (self.BASELINE, path)):
                    with self.subTest(fragment=fragment, baseline=baseline):
                        result = run_ratios(baseline, saved)
                        self.assertEqual(result.returncode, 1, result.stderr)
                        self.assertEqual(result.stdout, "")
                        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                        self.assertIn(f"microbench: {path}: {fragment}", result.stderr)

    def test_bad_input_is_one_line_and_status_1(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "missing.json")
            report = os.path.join(d, "microbench_report.json")
            no_runs = os.path.join(d, "no_runs.json")
            bad_median = os.path.join(d, "bad_median.json")
            contents = {
                report: {"format": mb.FORMAT},
                no_runs: ratios_file([]),
                bad_median: ratios_file([{"ratios": {MATMUL_1024: {"median": "fast"}}}]),
            }
            for path, content in contents.items():
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(content, f)
            binary = os.path.join(d, "events.out.tfevents")
            with open(binary, "wb") as f:
                f.write(b"\xff\xfe\x00\x01 not text")
            cases = ((missing, "cannot read"), (report, "not a microbench ratios file"),
                     (no_runs, "must be a non-empty list"), (bad_median, "must be a non-empty list"),
                     (binary, "not UTF-8 text"))
            for path, fragment in cases:
                for baseline, saved in ((path, self.NEW), (self.BASELINE, path)):
                    result = run_ratios(baseline, saved)
                    self.assertEqual(result.returncode, 1)
                    self.assertEqual(result.stdout, "")
                    self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                    self.assertIn(fragment, result.stderr)
                    self.assertIn(path, result.stderr)


# Bazel as far as the build before measuring sees it: a line on each stream,
# the exit status FAKE_BAZEL_STATUS.
FAKE_BAZEL = """#!/bin/sh
echo "fake bazel stdout: $*"
echo "INFO: fake bazel progress" >&2
exit "${FAKE_BAZEL_STATUS:-0}"
"""


class BuildOutputTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        bazel = os.path.join(self.tmp.name, "bazel")
        with open(bazel, "w", encoding="utf-8") as f:
            f.write(FAKE_BAZEL)
        os.chmod(bazel, os.stat(bazel).st_mode | stat.S_IXUSR)

    def tearDown(self):
        self.tmp.cleanup()

    def ratios(self, status):
        """ratios --subset ci on the fake bazel: the build, then a missing binary (nothing was built)."""
        env = dict(os.environ, PATH=self.tmp.name + os.pathsep + os.environ.get("PATH", ""),
                   FAKE_BAZEL_STATUS=str(status))
        return tool_module.run("microbench", "ratios", "--subset", "ci", "--baseline",
                               os.path.join(HERE, "ratios_baseline.json"), env=env)

    def test_bazel_progress_goes_to_stderr_not_stdout(self):
        result = self.ratios(0)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        lines = result.stderr.splitlines()
        labels = sorted({pairs.target for pairs in mb.SUBSETS["ci"]})
        self.assertEqual(lines[:3], [
            f"microbench: building {len(labels)} target(s) with Bazel (minutes on a cold cache; its progress "
            "follows on stderr)",
            f"fake bazel stdout: build {' '.join(labels)}",
            "INFO: fake bazel progress",
        ])
        self.assertIn("no binary at", lines[-1])

    def test_a_failed_build_points_at_bazels_output(self):
        result = self.ratios(1)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        lines = result.stderr.splitlines()
        self.assertIn("INFO: fake bazel progress", lines)
        labels = sorted({pairs.target for pairs in mb.SUBSETS["ci"]})
        self.assertEqual(lines[-1], f"microbench: bazel build {' '.join(labels)} failed with status 1 (Bazel's "
                         "output is above)")


if __name__ == "__main__":
    unittest.main()
