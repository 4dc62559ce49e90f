"""tools/report diff on reports of the wrong shape where it matches items by
a value (a rank, a world size, a model) or computes with a number (a
percentile, a throughput): one line naming the file and the field, exit
status 1, instead of a traceback or a silent "-" (true is no integer, so it
cannot match rank 1). comm_bench reports (a task report's format with
extra.comm_bench): algbw and busbw per dtype and size side by side, not a
task table of "-". ddp_bench rows pair by world size whatever their
bucket labels (runs of other ranks per machine), as diff.py's do. The ddp_bench setup leaves out a topology neither run has,
and prints one of several lines below the table. Config differences name
nested fields by their dotted names. Times to different targets, or of
different tasks, are shown without a change against each other.
(The golden tables are //tests/tasks/common:report_diff_test's.)"""
import copy
import json
import os
import tempfile
import unittest

from tests.tools import tool_module

DDP_BENCH = {
    "format": "trainstack.ddp_bench.v1", "config": {"world_size": 2}, "environment": {},
    "benchmarks": [{"model": "resnet50", "batch_size": 32, "rows": [
        {"label": "1M/1G", "ddp": True, "world_size": 2, "sec_per_iter": {"p75": 1.0, "p95": 1.2},
         "examples_per_s": {"p75": 32.0, "p95": 26.7}}]}],
}
NEIGHBOR_BENCH = {
    "format": "trainstack.neighbor_bench.v1", "config": {"world_size": 2}, "environment": {},
    "total": {"mean": 560.5, "conf": 6.4}, "per_rank": [{"rank": 0, "mean": 281.5}, {"rank": 1, "mean": 279.0}],
}
COMM_BENCH = {
    "format": "trainstack.report.v1", "config": {"world_size": 2, "backend": "mpi", "device": "cpu"},
    "environment": {"device": "cpu"}, "world": None, "epochs": [], "throughput": None,
    "extra": {"comm_bench": {"results": [
        {"dtype": "f32", "elements": 1, "bytes": 4, "algbw_gbps": 0.004, "busbw_gbps": 0.004},
        {"dtype": "f32", "elements": 1000, "bytes": 4000, "algbw_gbps": 1.0, "busbw_gbps": 1.0},
        {"dtype": "f16", "elements": 1000, "bytes": 2000, "algbw_gbps": 0.5, "busbw_gbps": 0.5}]}},
}
TASK = {
    "format": "trainstack.report.v1", "config": {}, "environment": {}, "world": {"size": 1},
    "throughput": {"samples_per_s": 380.0, "p50_s": 0.32, "p75_s": 0.35, "p90_s": 0.38, "p95_s": 0.41, "steps": 6},
    "time_to_target": {"metric": "accuracy", "target": 0.6, "seconds": "not reached"},
}


def write(directory, name, report):
    """The path of report, written as JSON to directory/name."""
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f)
    return path


def run_diff(a, b):
    """tools/report diff of reports a and b, each written to a file of its own:
    (the finished process, the two files' paths, gone by then)."""
    with tempfile.TemporaryDirectory() as d:
        paths = [write(d, "a.json", a), write(d, "b.json", b)]
        return tool_module.run("report", "diff", *paths), paths


class ShapeTest(unittest.TestCase):
    def diff(self, good, bad):
        """tools/report diff of good against bad and of bad against good,
        each checked to fail the same way; (stderr, bad's path)."""
        with tempfile.TemporaryDirectory() as d:
            paths = [write(d, "good.json", good), write(d, "bad.json", bad)]
            errors = []
            for a, b in (paths, paths[::-1]):
                result = tool_module.run("report", "diff", a, b)
                self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
                self.assertEqual(result.stdout, "")
                self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
                errors.append(result.stderr.strip())
            self.assertEqual(errors[0], errors[1])
            return errors[0].replace(paths[1], "BAD")

    def changed(self, report, change):
        report = copy.deepcopy(report)
        change(report)
        return report

    def test_the_fixtures_diff(self):
        for report in (DDP_BENCH, NEIGHBOR_BENCH, TASK, COMM_BENCH):
            result, _ = run_diff(report, report)
            self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_file_that_is_not_text_is_named(self):
        with tempfile.TemporaryDirectory() as d:
            good = write(d, "good.json", TASK)
            binary = os.path.join(d, "events.out.tfevents")  # a TensorBoard file, say
            with open(binary, "wb") as f:
                f.write(b"\xff\xfe\x00\x01 not text")
            for a, b in ((good, binary), (binary, good)):
                result = tool_module.run("report", "diff", a, b)
                self.assertEqual(result.returncode, 1, result.stderr)
                self.assertEqual(result.stderr, f"report: {binary} is not JSON: not UTF-8 text (byte 0)\n")

    def test_a_key_that_cannot_match_is_named(self):
        cases = [
            (NEIGHBOR_BENCH, lambda r: r["per_rank"][1].__setitem__("rank", [1]),
             'report: BAD: "per_rank[1].rank" is [1], not an integer'),
            (DDP_BENCH, lambda r: r["benchmarks"][0]["rows"][0].__setitem__("world_size", [2]),
             'report: BAD: "benchmarks[0].rows[0].world_size" is [2], not an integer'),
            (DDP_BENCH, lambda r: r["benchmarks"][0].__setitem__("model", {"name": "resnet50"}),
             'report: BAD: "benchmarks[0].model" is {"name": "resnet50"}, not a string'),
        ]
        for good, change, message in cases:
            with self.subTest(message=message):
                self.assertEqual(self.diff(good, self.changed(good, change)), message)

    def test_a_number_of_the_wrong_type_is_named_not_shown_as_a_dash(self):
        cases = [
            (DDP_BENCH, lambda r: r["benchmarks"][0]["rows"][0]["sec_per_iter"].__setitem__("p75", "1.2"),
             'report: BAD: "benchmarks[0].rows[0].sec_per_iter.p75" is "1.2", not a number'),
            (DDP_BENCH, lambda r: r["benchmarks"][0]["rows"][0]["examples_per_s"].__setitem__("p95", True),
             'report: BAD: "benchmarks[0].rows[0].examples_per_s.p95" is true, not a number'),
            (NEIGHBOR_BENCH, lambda r: r["total"].__setitem__("mean", "560"),
             'report: BAD: "total.mean" is "560", not a number'),
            (TASK, lambda r: r["throughput"].__setitem__("p95_s", [0.4]),
             'report: BAD: "throughput.p95_s" is [0.4], not a number'),
        ]
        for good, change, message in cases:
            with self.subTest(message=message):
                self.assertEqual(self.diff(good, self.changed(good, change)), message)

    def test_a_world_size_rank_or_model_of_the_wrong_scalar_type_is_named(self):
        # A string, a bool (Python's bool is an int: true matched rank 1) or a float where an
        # integer is required; a number where a name is.
        def row(r):
            return r["benchmarks"][0]["rows"][0]
        cases = [
            (DDP_BENCH, lambda r: row(r).__setitem__("world_size", "one"),
             'report: BAD: "benchmarks[0].rows[0].world_size" is "one", not an integer'),
            (DDP_BENCH, lambda r: row(r).__setitem__("world_size", True),
             'report: BAD: "benchmarks[0].rows[0].world_size" is true, not an integer'),
            (DDP_BENCH, lambda r: row(r).__setitem__("world_size", 2.0),
             'report: BAD: "benchmarks[0].rows[0].world_size" is 2.0, not an integer'),
            (DDP_BENCH, lambda r: r["config"].__setitem__("world_size", "one"),
             'report: BAD: "config.world_size" is "one", not an integer'),
            (DDP_BENCH, lambda r: r["benchmarks"][0].__setitem__("model", 5),
             'report: BAD: "benchmarks[0].model" is 5, not a string'),
            (DDP_BENCH, lambda r: r["benchmarks"][0].__setitem__("batch_size", True),
             'report: BAD: "benchmarks[0].batch_size" is true, not an integer'),
            (DDP_BENCH, lambda r: row(r).__setitem__("label", 1),
             'report: BAD: "benchmarks[0].rows[0].label" is 1, not a string'),
            (NEIGHBOR_BENCH, lambda r: r["per_rank"][1].__setitem__("rank", True),
             'report: BAD: "per_rank[1].rank" is true, not an integer'),
            (NEIGHBOR_BENCH, lambda r: r["config"].__setitem__("world_size", True),
             'report: BAD: "config.world_size" is true, not an integer'),
            (NEIGHBOR_BENCH, lambda r: r["config"].__setitem__("world_size", "one"),
             'report: BAD: "config.world_size" is "one", not an integer'),
            (TASK, lambda r: r["world"].__setitem__("size", "1"),
             'report: BAD: "world.size" is "1", not an integer'),
            (COMM_BENCH, lambda r: r["extra"]["comm_bench"]["results"][1].__setitem__("bytes", "4000"),
             'report: BAD: "extra.comm_bench.results[1].bytes" is "4000", not an integer'),
            (COMM_BENCH, lambda r: r["extra"]["comm_bench"]["results"][0].__setitem__("algbw_gbps", "fast"),
             'report: BAD: "extra.comm_bench.results[0].algbw_gbps" is "fast", not a number'),
            (COMM_BENCH, lambda r: r["extra"].__setitem__("comm_bench", [1]),
             'report: BAD: "extra.comm_bench" is [1], not an object'),
        ]
        for good, change, message in cases:
            with self.subTest(message=message):
                self.assertEqual(self.diff(good, self.changed(good, change)), message)


class CommBenchTest(unittest.TestCase):
    def test_bandwidth_per_dtype_and_size_side_by_side(self):
        b = copy.deepcopy(COMM_BENCH)
        results = b["extra"]["comm_bench"]["results"]
        results[1].update(algbw_gbps=1.5, busbw_gbps=1.5)  # 4000 bytes of f32: +50%
        del results[0]  # 4 bytes only in A
        results.append({"dtype": "f32", "elements": 10, "bytes": 40, "algbw_gbps": 0.04, "busbw_gbps": 0.04})
        b["config"]["backend"] = "nccl"
        result, paths = run_diff(COMM_BENCH, b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        lines = result.stdout.splitlines()
        table = lines[2:lines.index("", 2)]
        self.assertEqual([line.split() for line in table], [
            ["dtype", "size", "(B)", "algbw", "A", "algbw", "B", "B", "vs", "A", "busbw", "A", "busbw", "B", "B", "vs",
             "A"],
            ["f32", "4", "0.004", "-", "changed", "0.004", "-", "changed"],  # by size, A's dtype first
            ["f32", "40", "-", "0.04", "changed", "-", "0.04", "changed"],
            ["f32", "4000", "1", "1.5", "+50.0%", "1", "1.5", "+50.0%"],
            ["f16", "2000", "0.5", "0.5", "0.5", "0.5"],
        ])
        self.assertRegex(result.stdout, r"\n  world size +2 +2\n")
        self.assertRegex(result.stdout, r"\n  backend +mpi +nccl +changed\n")
        self.assertTrue(result.stdout.endswith(f"A = {paths[0]}\nB = {paths[1]}\n"), result.stdout)
        self.assertNotIn("samples/s", result.stdout)  # no task table

    def test_a_comm_bench_report_is_not_diffed_against_a_task_report(self):
        result, paths = run_diff(COMM_BENCH, TASK)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        self.assertEqual(result.stderr.strip(), f"report: {paths[0]} is a comm_bench report and {paths[1]} a task "
                         "report; diff compares two reports of one kind")


class ConfigDifferencesTest(unittest.TestCase):
    def test_nested_fields_differ_by_their_dotted_names(self):
        a, b = copy.deepcopy(TASK), copy.deepcopy(TASK)
        a["config"] = {"epochs": 3, "sgd": {"lr": 0.1, "momentum": 0.9}}
        b["config"] = {"epochs": 3, "sgd": {"lr": 0.2, "momentum": 0.9}, "loss_scaler": {"initial": 65536}}
        result, _ = run_diff(a, b)
        self.assertEqual(result.returncode, 0, result.stderr)
        lines = result.stdout.splitlines()
        section = lines[lines.index("config differences") + 1:]
        names = [line.split()[0] for line in section[:2]]
        self.assertEqual(names, ["loss_scaler.initial", "sgd.lr"], result.stdout)
        self.assertNotIn("momentum", result.stdout)
        self.assertNotIn("epochs", "\n".join(section))


class TimeToTargetTest(unittest.TestCase):
    def test_times_to_the_same_target_compare(self):
        a, b = copy.deepcopy(TASK), copy.deepcopy(TASK)
        a["time_to_target"]["seconds"], b["time_to_target"]["seconds"] = 10.0, 12.0
        result, _ = run_diff(a, b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertRegex(result.stdout, r"\n  accuracy >= 0.6 \(s\) +10 +12 +\+20\.0%\n")

    def test_times_to_different_targets_do_not(self):
        a, b = copy.deepcopy(TASK), copy.deepcopy(TASK)
        a["config"] = {"name": "my run", "[ts.tasks.lstm_lm]": {"bptt": 70}}
        b["config"] = {"name": "my run", "[ts.tasks.logreg]": {"l2": 0.0}}
        a["time_to_target"] = {"metric": "perplexity", "target": 175, "minimize": True, "seconds": 800.0,
                               "epoch": 4, "best": 145.0}
        b["time_to_target"].update(seconds=0.9, epoch=3, best=0.95)
        result, _ = run_diff(a, b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertTrue(result.stdout.startswith(
            "note: A and B are runs of different tasks (lstm_lm, logreg): their figures do not measure the same "
            "work\n"), result.stdout)
        self.assertRegex(result.stdout, r"\n  target +perplexity <= 175 +accuracy >= 0.6 +changed\n")
        for name, va, vb in (("seconds", "800", "0.9"), ("at epoch", "4", "3"), ("best", "145", "0.95")):
            self.assertRegex(result.stdout, rf"\n  {name} +{va} +{vb}\n")
        self.assertNotIn("perplexity <= 175 (s)", result.stdout)

    def test_renamed_runs_of_one_task_and_a_run_without_a_target(self):
        a, b = copy.deepcopy(TASK), copy.deepcopy(TASK)
        a["config"] = {"name": "resnet20", "[ts.tasks.resnet20]": {"depth": 20}}
        b["config"] = {"name": "resnet20-lr0.2", "[ts.tasks.resnet20]": {"depth": 20}}
        a["time_to_target"]["seconds"] = 10.0
        b["time_to_target"] = None
        result, _ = run_diff(a, b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("note:", result.stdout)
        self.assertRegex(result.stdout, r"\n  accuracy >= 0.6 \(s\) +10 +- +changed\n")
        self.assertNotIn("\n  target ", result.stdout)


class DdpBenchSetupTest(unittest.TestCase):
    def diff_lines(self, a, b):
        result, _ = run_diff(a, b)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result.stdout.splitlines()

    def setup_keys(self, a, b):
        return [line.split(":")[0] for line in self.diff_lines(a, b) if "  vs  " in line]

    def test_a_topology_neither_run_has_is_left_out(self):
        # A CPU run writes "topology": "" (no nvidia-smi); a hand-made report may have none.
        cpu = copy.deepcopy(DDP_BENCH)
        cpu["environment"]["topology"] = ""
        self.assertNotIn("topology", self.setup_keys(cpu, DDP_BENCH))
        self.assertIn("device", self.setup_keys(cpu, DDP_BENCH))
        gpu = copy.deepcopy(DDP_BENCH)
        gpu["environment"]["topology"] = "GPU0 X"
        self.assertIn("topology", self.setup_keys(cpu, gpu))

    def test_a_topology_of_several_lines_follows_the_table(self):
        # As `nvidia-smi topo -m` prints it: in one cell it would break the table.
        matrix = "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n"
        a, b = copy.deepcopy(DDP_BENCH), copy.deepcopy(DDP_BENCH)
        a["environment"]["topology"] = b["environment"]["topology"] = matrix
        same = self.diff_lines(a, b)
        self.assertIn("(below)", next(line for line in same if line.startswith("topology:")))
        at = same.index("topology (both runs):")
        self.assertEqual(same[at + 1:at + 4], matrix.rstrip("\n").splitlines())
        b["environment"]["topology"] = "GPU0\t X \n"
        differ = self.diff_lines(a, b)
        self.assertIn("topology (baseline):", differ)
        self.assertEqual(differ[differ.index("topology (test):") + 1], "GPU0\t X ")


class DdpBenchRowsTest(unittest.TestCase):
    def test_ddp_rows_pair_by_world_size_whatever_their_labels(self):
        def rows(per_machine, seconds):
            return [{"label": f"1M/{per_machine}G" if n <= per_machine else f"1M/{per_machine}G+{per_machine}G",
                     "ddp": True, "world_size": n, "sec_per_iter": {"p75": seconds * n, "p95": seconds * n},
                     "examples_per_s": {"p75": 32 / (seconds * n), "p95": 32 / (seconds * n)}} for n in (8, 16)]

        a, b = copy.deepcopy(DDP_BENCH), copy.deepcopy(DDP_BENCH)
        a["benchmarks"][0]["rows"], b["benchmarks"][0]["rows"] = rows(8, 1.0), rows(4, 0.5)
        result, _ = run_diff(a, b)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertNotIn("only in", result.stdout)
        self.assertIn("1M/8G vs 1M/4G+4G, 8 ranks:", result.stdout)
        self.assertIn("1M/8G+8G vs 1M/4G+4G, 16 ranks:", result.stdout)
        self.assertIn("+50.0%", result.stdout)


if __name__ == "__main__":
    unittest.main()
