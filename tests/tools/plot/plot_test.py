"""tools/plot: every subcommand on the fixture reports writes the PNGs it
names, non-empty and of exactly the size asked for; bad input (a missing
file, not JSON, a report of the wrong kind or format, a missing field, an
unknown model, metric or subcommand, an "eval" that is no object, a zero
baseline throughput or world size) is one line on stderr and exit status 1.
Also the numbers behind the figures: the epoch fallback of the loss curve,
DDP and neighbor_bench scaling (a neighbor_bench line of two models or
batch sizes is refused), percentiles.

The fixtures are small hand-made reports: task_epochs.json is a real logreg
report trimmed (written before "curves" and "throughput.step_seconds"
existed), task_short.json a real logreg report of a run stopped before its
first epoch ended (`bazel run //tasks/logreg -- --max_steps=3`: per-step
losses, "epochs" empty), comm_bench_mpi.json a real 2-rank sweep thinned to
every fifth size; the others follow the ddp_bench and neighbor_bench schemas."""
import glob
import json
import os
import re
import struct
import tempfile
import unittest

from tests.tools import tool_module

HERE = os.path.dirname(os.path.abspath(__file__))
NEIGHBOR_BENCH = sorted(glob.glob(os.path.join(HERE, "neighbor_bench", "*.json")))


def fixture(name):
    return os.path.join(HERE, name)


plot = tool_module.load("plot")


def setUpModule():
    python = os.path.join(plot.VENV, "bin", "python3")
    if not os.access(python, os.X_OK):
        raise AssertionError(f"no matplotlib venv at {plot.VENV}: run tools/setup")


def without_scaling(path):
    """The neighbor_bench report at path less the baseline it names."""
    with open(path, encoding="utf-8") as f:
        report = json.load(f)
    report.pop("scaling", None)
    return report


def png_size(path):
    """(width, height) from the IHDR chunk, which a PNG must start with."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


class ToolCase(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.tmp.name, "plots")
        # matplotlib's font cache, and fontconfig's (matplotlib runs fc-list
        # where fontconfig is installed), somewhere writable inside the
        # sandbox, whose HOME is not.
        self.env = dict(os.environ, MPLCONFIGDIR=os.path.join(self.tmp.name, "mplconfig"),
                        XDG_CACHE_HOME=os.path.join(self.tmp.name, "cache"))

    def tearDown(self):
        self.tmp.cleanup()

    def run_tool(self, *args):
        return tool_module.run("plot", *args, env=self.env)

    def assert_renders(self, args, names, size=(1200, 800)):
        """Runs the tool, which must write exactly names.png under the out folder, say so, and
        make each PNG non-empty and size pixels."""
        result = self.run_tool(*args, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        paths = [os.path.join(self.out, f"{n}.png") for n in names]
        self.assertEqual(result.stdout.splitlines(), [f"plot: wrote {p}" for p in paths])
        self.assertEqual(sorted(os.listdir(self.out)), sorted(f"{n}.png" for n in names))
        for p in paths:
            self.assertGreater(os.path.getsize(p), 1000, p)
            self.assertEqual(png_size(p), size, p)

    def assert_fails(self, args, message):
        """One line on stderr, "plot: ..." holding message, exit status 1, and no file written."""
        result = self.run_tool(*args, "--out", self.out)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stdout, "")
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith("plot: "), lines[0])
        self.assertIn(message, lines[0])
        self.assertFalse(os.path.exists(self.out) and os.listdir(self.out))

    def write(self, name, content):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(content if isinstance(content, str) else json.dumps(content))
        return path


class RenderTest(ToolCase):
    def test_curves_against_steps(self):
        self.assert_renders(["curves", fixture("task_epochs.json"), fixture("task_steps.json")],
                            ["train_loss_vs_steps", "eval_accuracy_vs_steps", "eval_loss_vs_steps"])

    def test_curves_against_time_of_one_metric_with_labels(self):
        self.assert_renders(["curves", fixture("task_steps.json"), fixture("task_epochs.json"), "--x", "time",
                             "--metric", "accuracy", "--labels", "resnet20,logreg", "--size", "1234x567"],
                            ["train_loss_vs_time", "eval_accuracy_vs_time"], size=(1234, 567))

    def test_curves_of_a_run_stopped_before_its_first_epoch(self):
        # An empty "epochs" only means no eval points: the loss comes from "curves", and beside
        # other reports the run is a line of the loss figure and absent from the eval ones.
        self.assert_renders(["curves", fixture("task_short.json")], ["train_loss_vs_steps"])

    def test_curves_of_a_run_stopped_before_its_first_epoch_beside_a_whole_run(self):
        self.assert_renders(["curves", fixture("task_short.json"), fixture("task_steps.json"), "--x", "time"],
                            ["train_loss_vs_time", "eval_accuracy_vs_time", "eval_loss_vs_time"])

    def test_bandwidth(self):
        self.assert_renders(["bandwidth", fixture("comm_bench_mpi.json")], ["allreduce_bandwidth"])
        self.assert_renders(["bandwidth", fixture("comm_bench_mpi.json"), fixture("comm_bench_nccl.json"), "--size",
                             "1000x600"], ["allreduce_bandwidth"], size=(1000, 600))

    def test_bandwidth_of_one_rank_says_it_has_no_bus_bandwidth(self):
        with open(fixture("comm_bench_mpi.json"), encoding="utf-8") as f:
            report = json.load(f)
        report["config"]["world_size"] = 1
        for row in report["extra"]["comm_bench"]["results"]:
            row["busbw_gbps"] = row["mpi_busbw_gbps"] = 0.0
        path = self.write("one_rank.json", report)
        result = self.run_tool("bandwidth", path, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr.splitlines(),
                         ["plot: note: one_rank: one rank, no bus bandwidth (algbw x 2(n-1)/n is 0) to draw"])
        self.assertGreater(os.path.getsize(os.path.join(self.out, "allreduce_bandwidth.png")), 1000)

    def test_ddp_scaling(self):
        self.assert_renders(["scaling", fixture("ddp_bench.json")],
                            ["ddp_scaling_resnet50", "ddp_scaling_resnext50_32x4d"])

    def test_ddp_scaling_of_one_model(self):
        self.assert_renders(["scaling", fixture("ddp_bench.json"), "--model", "resnet50"], ["ddp_scaling_resnet50"])

    def test_ddp_scaling_of_two_runs_and_neighbor_bench_at_once(self):
        # NEIGHBOR_BENCH is sorted: the four allreduce reports, then the four neighbor_allreduce ones.
        labels = ["bucket 25 MB", "bucket 1 MB"] + ["allreduce"] * 4 + ["neighbor_allreduce"] * 4
        self.assert_renders(["scaling", fixture("ddp_bench.json"), fixture("ddp_bench.json"), *NEIGHBOR_BENCH,
                             "--labels", ",".join(labels)],
                            ["ddp_scaling_resnet50", "ddp_scaling_resnext50_32x4d", "neighbor_bench_scaling"])

    def test_neighbor_scaling(self):
        self.assert_renders(["scaling", *NEIGHBOR_BENCH, "--size", "800x500"], ["neighbor_bench_scaling"],
                            size=(800, 500))

    def test_neighbor_scaling_without_any_one_rank_run_says_so(self):
        paths = [self.write(f"allreduce_{w}.json", without_scaling(NEIGHBOR_BENCH[i])) for i, w in ((1, 2), (2, 4))]
        result = self.run_tool("scaling", *paths, "--out", self.out)
        self.assertEqual(result.returncode, 0, result.stderr)
        png = os.path.join(self.out, "neighbor_bench_scaling.png")
        self.assertEqual(result.stdout.splitlines(), [f"plot: wrote {png}"])
        self.assertGreater(os.path.getsize(png), 1000)
        self.assertEqual(result.stderr.splitlines(), [
            f"plot: note: allreduce: no one-rank run, and no baseline its reports name: its efficiency is against "
            f"its own 2-rank run ({paths[0]}), which reads 100%"])

    def test_step_times(self):
        self.assert_renders(["step_times", fixture("task_steps.json"), fixture("ddp_bench.json")],
                            ["step_times", "ddp_step_times_resnet50", "ddp_step_times_resnext50_32x4d"])


class BadInputTest(ToolCase):
    def test_missing_file(self):
        missing = os.path.join(self.tmp.name, "missing.json")
        self.assert_fails(["curves", missing], f"plot: {missing}: cannot read: No such file or directory")

    def test_not_json(self):
        path = self.write("broken.json", '{"format": ')
        self.assert_fails(["curves", path], f"plot: {path}: not JSON: ")

    def test_unknown_format(self):
        path = self.write("other.json", {"format": "trainstack.microbench.1"})
        self.assert_fails(["step_times", path], f'plot: {path}: "format" is "trainstack.microbench.1", not one of')

    def test_report_of_the_wrong_kind(self):
        cases = [
            ("curves", "comm_bench_mpi.json", "a comm_bench report; curves plots task reports"),
            ("bandwidth", "task_steps.json", "a task report; bandwidth plots comm_bench reports"),
            ("scaling", "task_steps.json", "a task report; scaling plots ddp_bench and neighbor_bench reports"),
            ("step_times", "comm_bench_nccl.json", "a comm_bench report; step_times plots task and ddp_bench"),
        ]
        for command, name, message in cases:
            with self.subTest(command=command):
                self.assert_fails([command, fixture(name)], f"plot: {fixture(name)}: {message}")

    def test_old_report_has_no_step_times(self):
        self.assert_fails(["step_times", fixture("task_epochs.json")], 'no "throughput.step_seconds"')

    def test_ddp_bench_without_its_baseline_row(self):
        with open(fixture("ddp_bench.json"), encoding="utf-8") as f:
            report = json.load(f)
        for benchmark in report["benchmarks"]:
            benchmark["rows"] = [r for r in benchmark["rows"] if r["ddp"]]
        path = self.write("ddp_bench.json", report)
        self.assert_fails(["scaling", path], 'resnet50 has no "ddp": false row')

    def test_epochs_missing_or_of_the_wrong_type_is_named(self):
        with open(fixture("task_short.json"), encoding="utf-8") as f:
            short = json.load(f)
        for epochs, message in ((None, 'no "epochs"'), ({"1": {}}, '"epochs" is not a list of objects'),
                                ([{}, 2], '"epochs" is not a list of objects')):
            report = dict(short, epochs=epochs)
            if epochs is None:
                del report["epochs"]
            path = self.write("task.json", report)
            with self.subTest(epochs=epochs):
                self.assert_fails(["curves", path], f"plot: {path}: {message}")

    def test_a_report_with_neither_curves_nor_epochs_says_so(self):
        with open(fixture("task_short.json"), encoding="utf-8") as f:
            report = json.load(f)
        del report["curves"]
        path = self.write("task.json", report)
        self.assert_fails(["curves", path, fixture("task_steps.json")],
                          f'plot: {path}: nothing to plot: no per-step "curves.train_loss", and "epochs" is empty')

    def test_step_times_of_a_run_of_warm_up_steps_only_says_so(self):
        path = fixture("task_short.json")
        self.assert_fails(["step_times", path],
                          f'plot: {path}: no step was timed: its 3 step(s) were all warm-up '
                          '("config.warmup_steps" is 5); run more steps than that')

    def test_eval_that_is_not_an_object(self):
        with open(fixture("task_epochs.json"), encoding="utf-8") as f:
            report = json.load(f)
        report["epochs"][1]["eval"] = [1]
        path = self.write("task.json", report)
        self.assert_fails(["curves", path], f'plot: {path}: epochs[1]: "eval" is [1], not an object')

    def test_a_zero_baseline_throughput_is_named_not_divided_by(self):
        with open(fixture("ddp_bench.json"), encoding="utf-8") as f:
            report = json.load(f)
        baseline = next(r for r in report["benchmarks"][0]["rows"] if not r["ddp"])
        baseline["examples_per_s"]["p50"] = 0
        path = self.write("ddp_bench.json", report)
        self.assert_fails(["scaling", path], f'plot: {path}: resnet50 row {baseline["label"]}: "examples_per_s.p50" '
                          'is 0, not above 0, the baseline of linear scaling')

    def test_a_zero_world_size_is_named_not_divided_by(self):
        # neighbor_allreduce_1.json has no scaling section, allreduce_2.json has one.
        for path_in in (NEIGHBOR_BENCH[4], NEIGHBOR_BENCH[1]):
            with open(path_in, encoding="utf-8") as f:
                report = json.load(f)
            report["config"]["world_size"] = 0
            path = self.write("neighbor_bench.json", report)
            with self.subTest(report=os.path.basename(path_in)):
                self.assert_fails(["scaling", path], f'plot: {path}: "config.world_size" is 0, not above 0')

    def test_unknown_model(self):
        self.assert_fails(["scaling", fixture("ddp_bench.json"), "--model", "vgg16"],
                          "no model 'vgg16' (it has resnet50, resnext50_32x4d)")

    def test_unknown_metric(self):
        self.assert_fails(["curves", fixture("task_steps.json"), "--metric", "bleu"],
                          "no eval metric 'bleu' (it has accuracy, loss)")

    def test_same_world_size_twice_in_a_line(self):
        self.assert_fails(["scaling", NEIGHBOR_BENCH[0], NEIGHBOR_BENCH[0]], "world size 1 again")

    def test_unknown_subcommand(self):
        self.assert_fails(["histogram", fixture("task_steps.json")], "invalid choice: 'histogram'")

    def test_labels_of_the_wrong_count(self):
        self.assert_fails(["curves", fixture("task_steps.json"), "--labels", "a,b"],
                          "--labels names 2 lines for 1 reports")

    def test_bad_size(self):
        self.assert_fails(["curves", fixture("task_steps.json"), "--size", "1200"], "is not WIDTHxHEIGHT")


class SeriesTest(unittest.TestCase):
    def test_loss_falls_back_to_epoch_means_at_cumulative_steps(self):
        report = plot.load(fixture("task_epochs.json"))
        x, loss, per_step = plot.loss_curve(report, "steps")
        self.assertFalse(per_step)
        self.assertEqual(x, [600, 1200, 1800])
        self.assertEqual(loss, [e["train_loss"] for e in report.data["epochs"]])
        x, _, _ = plot.loss_curve(report, "time")
        self.assertEqual(x, [e["wall_seconds"] for e in report.data["epochs"]])

    def test_loss_per_step_when_the_report_has_curves(self):
        report = plot.load(fixture("task_steps.json"))
        x, loss, per_step = plot.loss_curve(report, "steps")
        self.assertTrue(per_step)
        self.assertEqual(x, list(range(1, 121)))
        self.assertEqual(loss, report.data["curves"]["train_loss"]["value"])

    def test_ddp_scaling_against_the_no_ddp_row(self):
        report = plot.load(fixture("ddp_bench.json"))
        benchmark = report.data["benchmarks"][0]
        rows = {r["label"]: r["examples_per_s"]["p50"] for r in benchmark["rows"]}
        line = plot.ddp_scaling(report, benchmark, "resnet50", "DDP", "linear scaling")
        self.assertEqual(line.world, [1, 2, 4, 8, 16])
        self.assertAlmostEqual(line.total[1], 2 * rows["1M/2G"])
        self.assertAlmostEqual(line.linear[4], 16 * rows["no ddp"])
        self.assertAlmostEqual(line.efficiency[3], rows["1M/8G"] / rows["no ddp"])

    def test_neighbor_lines_scale_from_one_rank(self):
        reports = [plot.load(p) for p in NEIGHBOR_BENCH]
        lines = {line.name: line for line in plot.neighbor_scaling_figure(reports).lines}
        self.assertEqual(sorted(lines), ["allreduce", "neighbor_allreduce"])
        neighbor = lines["neighbor_allreduce"]
        self.assertEqual(neighbor.world, [1, 2, 4, 8])
        # neighbor_allreduce reports carry no scaling section: the 1-rank run is the baseline.
        self.assertEqual(neighbor.linear, [w * neighbor.total[0] for w in neighbor.world])
        self.assertEqual(neighbor.efficiency[0], 1.0)
        # allreduce's name the baseline they were measured against.
        self.assertEqual(lines["allreduce"].linear, [301.2 * w for w in lines["allreduce"].world])

    def test_a_run_stopped_before_its_first_epoch_has_its_loss_and_no_eval_points(self):
        report = plot.load(fixture("task_short.json"))
        self.assertEqual(plot.loss_curve(report, "steps"), ([1, 2, 3], report.data["curves"]["train_loss"]["value"],
                                                             True))
        self.assertEqual(plot.eval_metrics(report), set())
        self.assertEqual(plot.metric_curve(report, "accuracy", "steps"), ([], []))

    def test_a_line_without_a_one_rank_run_says_what_it_scales_from(self):
        # allreduce at 2 and 4 ranks, without the baseline its reports name, beside
        # neighbor_allreduce at 1 and 2: allreduce scales from its own 2-rank run (at one rank
        # each dist_optimizer's step costs differently, so neighbor_allreduce's is no baseline
        # for it), and the legend, the title and a note say so.
        reports = [plot.load(p) for p in NEIGHBOR_BENCH[1:3] + NEIGHBOR_BENCH[4:6]]
        for r in reports[:2]:
            del r.data["scaling"]
        figure = plot.neighbor_scaling_figure(reports)
        lines = {line.name: line for line in figure.lines}
        allreduce = lines["allreduce"]
        self.assertEqual(allreduce.world, [2, 4])
        self.assertEqual(allreduce.linear, [531.9, 2 * 531.9])
        self.assertEqual(allreduce.efficiency[0], 1.0)
        self.assertEqual(allreduce.linear_label, "linear scaling (allreduce, from its 2-rank run)")
        self.assertEqual(lines["neighbor_allreduce"].linear_label, "linear scaling (neighbor_allreduce)")
        self.assertEqual(lines["neighbor_allreduce"].linear, [300.3, 2 * 300.3])
        self.assertIn("no one-rank run: efficiency of allreduce against its 2-rank run", figure.title)
        self.assertEqual(figure.notes, (
            f"allreduce: no one-rank run, and no baseline its reports name: its efficiency is against its own "
            f"2-rank run ({NEIGHBOR_BENCH[1]}), which reads 100%; the one-rank run of neighbor_allreduce is not "
            "used, as at one rank each dist_optimizer's step costs differently (neighbor_bench --baseline takes "
            "one explicitly)",))

    def test_a_line_of_two_models_is_refused(self):
        reports = [plot.load(p) for p in NEIGHBOR_BENCH[:2]]  # allreduce at 1 and 2 ranks
        reports[1].data["config"]["model"] = "resnet101"
        with self.assertRaisesRegex(plot.InputError, re.escape(
                f"{NEIGHBOR_BENCH[1]}: config.model resnet101 in the line 'allreduce', where {NEIGHBOR_BENCH[0]} "
                "has resnet50: give each workload its own --labels")):
            plot.neighbor_scaling_figure(reports)
        reports[1].data["config"]["model"] = "resnet50"
        reports[1].data["config"]["batch_size"] = 32
        with self.assertRaisesRegex(plot.InputError, "config.batch_size 32 in the line 'allreduce'"):
            plot.neighbor_scaling_figure(reports)
        reports[1].data["config"]["batch_size"] = reports[0].data["config"]["batch_size"]
        reports[1].data["config"]["dtype"] = "bf16"
        with self.assertRaisesRegex(plot.InputError, "config.dtype bf16 in the line 'allreduce', where .* has None"):
            plot.neighbor_scaling_figure(reports)
        # How long each was timed, or on which GPU, may differ.
        del reports[1].data["config"]["dtype"]
        reports[1].data["config"].update(num_iters=50, device="cuda:1")
        plot.neighbor_scaling_figure(reports)

    def test_lines_with_a_one_rank_run_or_a_named_baseline_have_no_note(self):
        figure = plot.neighbor_scaling_figure([plot.load(p) for p in NEIGHBOR_BENCH[1:4] + NEIGHBOR_BENCH[4:]])
        self.assertEqual(figure.notes, ())
        self.assertNotIn("no one-rank run", figure.title)

    def test_percentile_interpolates_as_step_times_cc(self):
        self.assertEqual(plot.percentile([4, 1, 3, 2], 50), 2.5)
        self.assertAlmostEqual(plot.percentile(list(range(1, 21)), 95), 19.05)

    def test_smoothing(self):
        self.assertEqual(plot.smoothed([3.0, 1.0], 0), [3.0, 1.0])
        # Debiased: a constant stays constant from the first value on.
        self.assertEqual([round(v, 12) for v in plot.smoothed([2.0] * 5, 0.9)], [2.0] * 5)
        # By default the average spans a fiftieth of the longest curve; short curves stay raw.
        self.assertAlmostEqual(plot.auto_smoothing(5000), 0.99)
        self.assertEqual(plot.auto_smoothing(40), 0.0)


if __name__ == "__main__":
    unittest.main()
