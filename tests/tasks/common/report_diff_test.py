"""tools/report diff on small reports: the A/B rows, percent changes, "not
reached", only differing config fields; the whole output for two task
reports, two ddp_bench reports and two neighbor_bench reports against golden
files; one named error line and exit status 1 for bad input.

The golden files are the tool's output on the fixtures beside them; after a
deliberate change of the layout, refresh them from tests/tasks/common/testdata:
  ../../../../tools/report diff task_report_a.json task_report_b.json > task_report_diff.txt
  ../../../../tools/report diff ddp_bench_baseline.json ddp_bench_test.json > ddp_bench_diff.txt
  ../../../../tools/report diff neighbor_bench_a.json neighbor_bench_b.json > neighbor_bench_diff.txt
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", ""), "trainstack")
TOOL = os.path.join(RUNFILES, "tools", "report")
TESTDATA = os.path.join(RUNFILES, "tests", "tasks", "common", "testdata")


def report(samples_per_s, p50, reached_seconds, accuracy, lr, comm):
    return {
        "format": "trainstack.report.v1",
        "config": {"lr": lr, "epochs": 2, "name": "toy"},
        "environment": {"device": "cpu", "gpu_name": "none", "commit": "abc"},
        "world": {"size": 1, "rank": 0},
        "epochs": [
            {"epoch": 1, "train_loss": 0.9, "eval": {"accuracy": 0.5}},
            {"epoch": 2, "train_loss": 0.4, "eval": {}},
            {"epoch": 3, "train_loss": 0.3, "eval": {"accuracy": accuracy}},
        ],
        "throughput": {"samples_per_s": samples_per_s, "p50_s": p50, "p75_s": 0.2, "p90_s": 0.3, "p95_s": 0.4,
                       "steps": 100},
        "time_to_target": {"metric": "accuracy", "target": 0.9, "reached": reached_seconds != "not reached",
                           "seconds": reached_seconds, "epoch": None, "best": accuracy},
        "time_breakdown": {"step_seconds_total": 10.0, "buckets": {"communication": comm}, "other_seconds": 10 - comm},
        "extra": {},
    }


class ReportDiffTest(unittest.TestCase):
    def run_tool(self, *args, cwd=None):
        return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True, cwd=cwd)

    def assert_fails_with(self, args, *fragments):
        r = self.run_tool(*args)
        self.assertEqual(r.returncode, 1, r.stdout)
        self.assertEqual(r.stdout, "")
        self.assertEqual(len(r.stderr.splitlines()), 1, r.stderr)
        for fragment in fragments:
            self.assertIn(fragment, r.stderr)

    def assert_golden(self, a, b, golden):
        # Run where the fixtures are, so the output names them as the golden file does.
        r = self.run_tool("diff", a, b, cwd=TESTDATA)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(os.path.join(TESTDATA, golden), encoding="utf-8") as f:
            self.assertEqual(r.stdout, f.read())

    def write(self, name, content):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(dir=os.environ.get("TEST_TMPDIR"))

    def tearDown(self):
        self.dir.cleanup()

    def test_diff_table(self):
        a = self.write("a.json", report(1000.0, 0.1, "not reached", 0.85, 0.1, 2.0))
        b = self.write("b.json", report(1250.0, 0.08, 42.5, 0.93, 0.2, 1.0))
        r = self.run_tool("diff", a, b)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = {line.split("  ")[1].strip() if line.startswith("  ") else line: line for line in r.stdout.splitlines()}
        self.assertRegex(lines["samples/s"], r"1000\s+1250\s+\+25\.0%$")
        self.assertRegex(lines["step p50 (s)"], r"0\.1\s+0\.08\s+-20\.0%$")
        self.assertRegex(lines["accuracy >= 0.9 (s)"], r"not reached\s+42\.5\s+changed$")
        self.assertRegex(lines["accuracy"], r"0\.85\s+0\.93\s+\+9\.4%$")  # the last evaluated epoch
        self.assertRegex(lines["evaluated after epoch"], r"3\s+3\s*$")
        self.assertRegex(lines["communication (s)"], r"2\s+1\s+-50\.0%$")
        self.assertRegex(lines["lr"], r"0\.1\s+0\.2\s+\+100\.0%$")
        config_part = r.stdout.split("config differences")[1]
        self.assertNotIn("epochs", config_part)  # equal fields are not listed
        self.assertNotIn("name", config_part)

    def test_a_minimized_target_reads_at_most(self):
        reports = [report(1.0, 1.0, seconds, 0.9, 0.1, 0.0) for seconds in (3.0, 4.0)]
        for r_ in reports:
            r_["time_to_target"].update(metric="perplexity", target=175.0, minimize=True)
        r = self.run_tool("diff", self.write("a.json", reports[0]), self.write("b.json", reports[1]))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("perplexity <= 175 (s)", r.stdout)
        self.assertNotIn("perplexity >=", r.stdout)

    def test_identical_configs(self):
        a = self.write("a.json", report(1.0, 1.0, 3.0, 0.9, 0.1, 0.0))
        r = self.run_tool("diff", a, a)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("(none)", r.stdout.split("config differences")[1])

    def test_task_reports_golden(self):
        # Per-step compute and communication, scaling efficiency and price
        # rows included.
        self.assert_golden("task_report_a.json", "task_report_b.json", "task_report_diff.txt")

    def test_ddp_bench_golden(self):
        # diff.py's layout: models matched by name and batch size, rows by
        # world size and label, the "no ddp" row left out, what only one run
        # has said so.
        self.assert_golden("ddp_bench_baseline.json", "ddp_bench_test.json", "ddp_bench_diff.txt")

    def test_neighbor_bench_golden(self):
        # Ranks matched by number, what only one run has shown as "-".
        self.assert_golden("neighbor_bench_a.json", "neighbor_bench_b.json", "neighbor_bench_diff.txt")

    def test_null_sections_read_as_absent(self):
        # The trainers write null for sections a run did not have; a hand-made
        # report may have null anywhere.
        a = report(1.0, 1.0, 3.0, 0.9, 0.1, 0.0)
        b = report(1.0, 1.0, 3.0, 0.9, 0.1, 0.0)
        for key in ("config", "throughput", "time_to_target", "time_breakdown", "world", "environment"):
            b[key] = None
        b["epochs"][2]["eval"] = None
        r = self.run_tool("diff", self.write("a.json", a), self.write("b.json", b))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"samples/s\s+1\s+-\s+changed")
        self.assertRegex(r.stdout, r"evaluated after epoch\s+3\s+1\s+-66\.7%")
        for name in ("ddp_bench_baseline.json", "neighbor_bench_a.json"):
            with open(os.path.join(TESTDATA, name), encoding="utf-8") as f:
                nulled = json.load(f)
            for key in nulled:
                if key != "format":
                    nulled[key] = None
            r = self.run_tool("diff", os.path.join(TESTDATA, name), self.write("nulled.json", nulled))
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_field_of_the_wrong_type_is_named(self):
        good = self.write("good.json", report(1.0, 1.0, 3.0, 0.9, 0.1, 0.0))
        bad = report(1.0, 1.0, 3.0, 0.9, 0.1, 0.0)
        bad["epochs"][1] = None
        self.assert_fails_with(["diff", good, self.write("bad.json", bad)], "bad.json", '"epochs[1]" is null',
                               "not an object")
        bad["epochs"] = {"1": {}}
        self.assert_fails_with(["diff", good, self.write("bad.json", bad)], '"epochs" is {"1": {}}, not a list')
        with open(os.path.join(TESTDATA, "ddp_bench_test.json"), encoding="utf-8") as f:
            ddp = json.load(f)
        ddp["benchmarks"][0]["rows"][1]["sec_per_iter"] = [0.1, 0.2]
        self.assert_fails_with(["diff", os.path.join(TESTDATA, "ddp_bench_baseline.json"),
                                self.write("ddp.json", ddp)], '"benchmarks[0].rows[1].sec_per_iter" is [0.1, 0.2]')

    def test_bad_inputs_are_named(self):
        good = self.write("good.json", report(1.0, 1.0, 3.0, 0.9, 0.1, 0.0))
        broken = self.write("broken.json", '{"format": "trainstack.report.v1",\n "x": }')
        foreign = self.write("foreign.json", {"hello": 1})
        unknown = self.write("unknown.json", {"format": "trainstack.unknown.v1"})
        ddp_bench = os.path.join(TESTDATA, "ddp_bench_baseline.json")
        self.assert_fails_with(["diff", good, broken], "broken.json is not JSON: line 2")
        deep = self.write("deep.json", "[" * 100000 + "]" * 100000)
        self.assert_fails_with(["diff", good, deep], "deep.json is not a report: its JSON nests too deep")
        self.assert_fails_with(["diff", foreign, good], "foreign.json is not a report tools/report reads",
                               "trainstack.report.*")
        self.assert_fails_with(["diff", ddp_bench, unknown], "unknown.json is not a report tools/report reads",
                               "trainstack.unknown.v1")
        self.assert_fails_with(["diff", good, os.path.join(self.dir.name, "missing.json")], "cannot read",
                               "missing.json")
        self.assert_fails_with(["diff", good, ddp_bench], "good.json is a task report",
                               "ddp_bench_baseline.json a ddp_bench report", "two reports of one kind")


if __name__ == "__main__":
    unittest.main()
