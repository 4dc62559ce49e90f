"""tools/test_summary.py: totals, failures (crashes and timeouts too), skip
reasons, disabled tests, which reports count when --runs_per_test folders
from an earlier invocation remain, and with --build_events only those of the
invocation that wrote them."""
import json
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
        elif outcome == "disabled":
            # What gtest 1.12 writes for a DISABLED_ test.
            body.append(f'<testcase name="DISABLED_{name}" status="notrun" result="suppressed" classname="Suite"/>')
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


    def test_disabled_tests_are_counted_apart_not_as_passed(self):
        rc, out = self.summarize({"a/test.xml": [("A", "pass"), ("B", "disabled"), ("C", "disabled")]})
        self.assertEqual(rc, 0, out)
        self.assertIn("test cases: 1 passed, 0 failed, 0 skipped, 2 disabled", out)
        self.assertIn("e.g. Suite.DISABLED_B", out)

    def test_an_empty_folder_name_is_refused_not_the_current_folder(self):
        with tempfile.TemporaryDirectory() as cwd:
            pathlib.Path(cwd, "test.xml").write_text(gtest_xml([("A", "fail")]))
            run = subprocess.run([sys.executable, TOOL, ""], capture_output=True, text=True, cwd=cwd)
        self.assertEqual(run.returncode, 2, run.stdout)
        self.assertEqual(run.stdout, "")
        self.assertIn("usage", run.stderr)


def test_result(label, xml_path, attempt=1, run=1):
    """A build event of Bazel 4's --build_event_json_file for one test result."""
    return {"id": {"testResult": {"label": label, "run": run, "shard": 1, "attempt": attempt,
                                  "configuration": {"id": "k8-dbg"}}},
            "testResult": {"testActionOutput": [{"name": "test.log", "uri": "file:///nowhere/test.log"},
                                                {"name": "test.xml", "uri": pathlib.Path(xml_path).as_uri()}],
                           "status": "PASSED"}}


class BuildEventsTest(unittest.TestCase):
    def summarize(self, events, root):
        path = os.path.join(root, "events.json")
        with open(path, "w", encoding="utf-8") as f:
            for event in events:
                f.write(json.dumps(event) + "\n")
        run = subprocess.run([sys.executable, TOOL, "--build_events", path], capture_output=True, text=True)
        return run.returncode, run.stdout

    def write(self, root, rel, cases):
        path = pathlib.Path(root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(gtest_xml(cases))
        return path

    def test_only_the_reports_of_this_invocation_count(self):
        with tempfile.TemporaryDirectory() as root:
            # A stale failure beside this run's reports, under another
            # configuration's folder, and a folder name with a space.
            self.write(root, "k8-opt/testlogs/old/test.xml", [("Old", "fail")])
            a = self.write(root, "k8-dbg/testlogs/a b/test.xml", [("A", "pass"), ("S", "no CUDA device")])
            b = self.write(root, "k8-dbg/testlogs/b/test.xml", [("B", "pass")])
            events = [{"id": {"started": {}}, "started": {}},
                      test_result("//a:a b", a), test_result("//b", b)]
            rc, out = self.summarize(events, root)
        self.assertEqual(rc, 0, out)
        self.assertIn("test cases: 2 passed, 0 failed, 1 skipped, 0 disabled", out)

    def test_a_flaky_tests_last_attempt_counts(self):
        with tempfile.TemporaryDirectory() as root:
            first = self.write(root, "t/test_attempts/attempt_1.xml", [("A", "fail")])
            last = self.write(root, "t/test.xml", [("A", "pass")])
            rc, out = self.summarize([test_result("//t", last, attempt=2), test_result("//t", first, attempt=1)], root)
        self.assertEqual(rc, 0, out)
        self.assertIn("test cases: 1 passed, 0 failed", out)

    def test_no_test_results_says_so(self):
        with tempfile.TemporaryDirectory() as root:
            rc, out = self.summarize([{"id": {"started": {}}, "started": {}}], root)
        self.assertEqual(rc, 0, out)
        self.assertEqual(out, "test cases: no test reports in this invocation\n")


if __name__ == "__main__":
    unittest.main()
