"""tools/report diff on reports of the wrong shape where it matches items by
a value (a rank, a world size, a model) or computes with a number (a
percentile, a throughput): one line naming the file and the field, exit
status 1, instead of a traceback or a silent "-". (The golden tables are
//tests/tasks/common:report_diff_test's.)"""
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
TASK = {
    "format": "trainstack.report.v1", "config": {}, "environment": {}, "world": {"size": 1},
    "throughput": {"samples_per_s": 380.0, "p50_s": 0.32, "p75_s": 0.35, "p90_s": 0.38, "p95_s": 0.41, "steps": 6},
    "time_to_target": {"metric": "accuracy", "target": 0.6, "seconds": "not reached"},
}


class ShapeTest(unittest.TestCase):
    def diff(self, good, bad):
        """tools/report diff of good against bad and of bad against good,
        each checked to fail the same way; (stderr, bad's path)."""
        with tempfile.TemporaryDirectory() as d:
            paths = []
            for name, report in (("good.json", good), ("bad.json", bad)):
                paths.append(os.path.join(d, name))
                with open(paths[-1], "w", encoding="utf-8") as f:
                    json.dump(report, f)
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
        with tempfile.TemporaryDirectory() as d:
            for report in (DDP_BENCH, NEIGHBOR_BENCH, TASK):
                path = os.path.join(d, "r.json")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(report, f)
                result = tool_module.run("report", "diff", path, path)
                self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_key_that_cannot_match_is_named(self):
        cases = [
            (NEIGHBOR_BENCH, lambda r: r["per_rank"][1].__setitem__("rank", [1]),
             'report: BAD: "per_rank[1].rank" is [1], not a string or a number'),
            (DDP_BENCH, lambda r: r["benchmarks"][0]["rows"][0].__setitem__("world_size", [2]),
             'report: BAD: "benchmarks[0].rows[0].world_size" is [2], not a string or a number'),
            (DDP_BENCH, lambda r: r["benchmarks"][0].__setitem__("model", {"name": "resnet50"}),
             'report: BAD: "benchmarks[0].model" is {"name": "resnet50"}, not a string or a number'),
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


if __name__ == "__main__":
    unittest.main()
