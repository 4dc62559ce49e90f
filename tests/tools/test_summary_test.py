"""tools/test_summary.py: totals, failures (crashes and timeouts too), skip
reasons, and which reports count when --runs_per_test folders from an earlier
invocation remain."""
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

TOOL = os.path.join(os.environ.get("TEST_SRCDIR", ""), "trainstack", "tools", "test_summary.py")


def gtest_xml(cases):
    body = []
    for name, outcome in cases:
        if outcome == "pass":
            body.append(f'<testcase name="{name}" classname="Suite" result="completed"/>')
        elif outcome == "fail":
            body.append(f'<testcase name="{name}" classname="Suite"><failure message="boom"/></testcase>')
        else:
            body.append(f'<testcase name="{name}" classname="Suite" result="skipped">'
                        f'<skipped message="x.cc:3&#x0A;{outcome}"/></testcase>')
    return '<testsuites><testsuite name="Suite">' + "".join(body) + "</testsuite></testsuites>"


class TestSummaryTest(unittest.TestCase):
    def summarize(self, files, written_last=()):
        """files: relative path -> list of cases, or raw text for the file;
        the paths in written_last get a later modification time than the rest."""
        with tempfile.TemporaryDirectory() as root:
            for rel, cases in files.items():
                path = pathlib.Path(root, rel)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(cases if isinstance(cases, str) else gtest_xml(cases))
                mtime_ns = 2_000_000_000 if rel in written_last else 1_000_000_000
                os.utime(path, ns=(mtime_ns, mtime_ns))
            run = subprocess.run([sys.executable, TOOL, root], capture_output=True, text=True)
            return run.returncode, run.stdout

    def test_counts_failures_and_groups_skips_by_reason(self):
        rc, out = self.summarize({
            "a/test.xml": [("A", "pass"), ("B", "fail")],
            "b/test.xml": [("C", "no CUDA device"), ("D", "no CUDA device")],
        })
        self.assertEqual(rc, 1)
        self.assertIn("test cases: 1 passed, 1 failed, 2 skipped", out)
        self.assertIn("FAILED  Suite.B", out)
        self.assertIn("2: no CUDA device", out)

    def test_a_crashed_or_timed_out_test_counts_as_failed(self):
        # Bazel's own report for a test that died before writing one.
        crashed = ('<testsuites><testsuite name="t"><testcase name="t" status="run">'
                   '<error message="exited with error code 139"/></testcase></testsuite></testsuites>')
        rc, out = self.summarize({"a/test.xml": crashed, "b/test.xml": [("B", "pass")]})
        self.assertEqual(rc, 1, out)
        self.assertIn("test cases: 1 passed, 1 failed, 0 skipped", out)

    def test_stale_repeat_folders_give_way_to_the_latest_plain_run(self):
        rc, out = self.summarize({
            "a/test.xml": [("A", "pass")],
            "a/run_1_of_2/test.xml": [("A", "fail")],
            "a/run_2_of_2/test.xml": [("A", "pass")],
            "b/run_1_of_2/test.xml": [("B", "pass")],
            "b/run_2_of_2/test.xml": [("B", "pass")],
        }, written_last={"a/test.xml"})
        self.assertEqual(rc, 0, out)
        self.assertIn("test cases: 3 passed, 0 failed, 0 skipped", out)

    def test_a_stale_plain_report_gives_way_to_the_latest_repeat_folders(self):
        rc, out = self.summarize({
            "a/test.xml": [("A", "pass")],
            "a/run_1_of_3/test.xml": [("A", "pass")],
            "a/run_1_of_2/test.xml": [("A", "fail")],
            "a/run_2_of_2/test.xml": [("A", "pass")],
        }, written_last={"a/run_1_of_2/test.xml", "a/run_2_of_2/test.xml"})
        self.assertEqual(rc, 1, out)
        self.assertIn("test cases: 1 passed, 1 failed, 0 skipped", out)

    def test_an_unreadable_report_is_named_not_silently_dropped(self):
        # Two processes writing one report leave text after the root element.
        clobbered = gtest_xml([("A", "pass")]) + gtest_xml([("A", "pass")])[10:]
        rc, out = self.summarize({
            "a/test.xml": clobbered,
            "b/test.xml": [("B", "pass")],
        })
        self.assertEqual(rc, 0, out)
        self.assertIn("test cases: 1 passed, 0 failed, 0 skipped", out)
        self.assertIn("unreadable report, not counted: ", out)
        self.assertIn("a/test.xml", out)


if __name__ == "__main__":
    unittest.main()
