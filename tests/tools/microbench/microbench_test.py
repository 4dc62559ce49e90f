"""tools/microbench: the Mann-Whitney U test on samples whose answer is known,
`compare`'s table against a golden output (plain text when redirected, exit
status 1 on a significant slowdown past the threshold), and one clear line
with exit status 1 for a missing file or a report of the wrong kind; the
same for `ratios` on saved runs (a ratio twice the baseline's fails, one
within the tolerance passes, a pair missing from the run is reported and
fails), its choice of the baseline run by CPU, and which pairs the CI
subset holds."""
import json
import os
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


def run_tool(*args):
    return tool_module.run("microbench", *args)


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

    def test_bad_input_is_one_line_and_status_1(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "missing.json")
            wrong = os.path.join(d, "task_report.json")
            with open(wrong, "w", encoding="utf-8") as f:
                json.dump({"format": "trainstack.report.v1"}, f)
            for path, fragment in ((missing, "cannot read"), (wrong, "not a microbench report")):
                result = run_tool("compare", os.path.join(HERE, "base.json"), path)
                self.assertEqual(result.returncode, 1)
                self.assertEqual(result.stdout, "")
                self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                self.assertIn(fragment, result.stderr)
                self.assertIn(path, result.stderr)



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
            cases = ((missing, "cannot read"), (report, "not a microbench ratios file"),
                     (no_runs, "must be a non-empty list"), (bad_median, "must be a non-empty list"))
            for path, fragment in cases:
                for baseline, saved in ((path, self.NEW), (self.BASELINE, path)):
                    result = run_ratios(baseline, saved)
                    self.assertEqual(result.returncode, 1)
                    self.assertEqual(result.stdout, "")
                    self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
                    self.assertIn(fragment, result.stderr)
                    self.assertIn(path, result.stderr)


if __name__ == "__main__":
    unittest.main()
