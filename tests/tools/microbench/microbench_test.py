"""tools/microbench: the Mann-Whitney U test on samples whose answer is known,
`compare`'s table against a golden output (plain text when redirected, exit
status 1 on a significant slowdown past the threshold), and one clear line
with exit status 1 for a missing file or a report of the wrong kind."""
import importlib.machinery
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNFILES = os.path.join(os.environ.get("TEST_SRCDIR", ""), "trainstack")
TOOL = os.path.join(RUNFILES, "tools", "microbench")


def load_tool():
    loader = importlib.machinery.SourceFileLoader("microbench", TOOL)
    spec = importlib.util.spec_from_loader("microbench", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


mb = load_tool()


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

    def test_ties_share_ranks(self):
        self.assertEqual(mb._ranks([5, 1, 5, 3]), [3.5, 1, 3.5, 2])


def run_tool(*args):
    return subprocess.run([sys.executable, TOOL, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


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


if __name__ == "__main__":
    unittest.main()
