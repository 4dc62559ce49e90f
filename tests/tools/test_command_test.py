"""tools/test against a fake `bazel` in a copy of the repository's tools/:
which words go to `bazel test` as options and which as target patterns
(relative and negative patterns, `--config sanitize` in two words and its
LeakSanitizer suppressions), //... only when no pattern is given, and a
summary of this invocation's test reports alone (from its build events,
not a stale report in bazel-testlogs), or a note when Bazel wrote none."""
import json
import os
import pathlib
import stat
import subprocess
import tempfile
import unittest

from tests.tools import tool_module

# Logs its arguments; `bazel test` writes one test result to the build
# event file it is given, as Bazel 4 does; `bazel info bazel-testlogs`
# names the repository's stale testlogs folder.
FAKE_BAZEL = r'''#!/usr/bin/env python3
import json, os, pathlib, sys
args = sys.argv[1:]
with open(os.environ["FAKE_BAZEL_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps(args) + "\n")
if args[:1] == ["info"]:
    print(os.environ["FAKE_BAZEL_TESTLOGS"])
    sys.exit(0)
status = int(os.environ.get("FAKE_BAZEL_EXIT", "0"))
events = [a.split("=", 1)[1] for a in args if a.startswith("--build_event_json_file=")]
if events and status != 2:  # 2: a bad option, before any build event
    xml = pathlib.Path(os.environ["FAKE_BAZEL_XML"])
    event = {"id": {"testResult": {"label": "//tests/x:x_test", "run": 1, "shard": 1, "attempt": 1,
                                   "configuration": {"id": "k8-dbg"}}},
             "testResult": {"testActionOutput": [{"name": "test.xml", "uri": xml.as_uri()}], "status": "PASSED"}}
    with open(events[-1], "w", encoding="utf-8") as f:
        f.write(json.dumps({"id": {"started": {}}, "started": {}}) + "\n" + json.dumps(event) + "\n")
sys.exit(status)
'''

GTEST_XML = ('<testsuites><testsuite name="S"><testcase name="{name}" classname="S" status="run" '
             'result="completed"{body}</testsuite></testsuites>')


def executable(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


class TestCommandTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        root = pathlib.Path(self.tmp.name)
        self.repo = root / "repo"
        for name in ("test", "test_summary.py"):
            executable(self.repo / "tools" / name, pathlib.Path(tool_module.tool_path(name)).read_text())
        for name in ("setup", "format"):
            executable(self.repo / "tools" / name, "#!/bin/sh\nexit 0\n")
        executable(root / "bin" / "bazel", FAKE_BAZEL)
        # This invocation's report (one passing case) and an earlier
        # invocation's, failing, where `bazel info bazel-testlogs` points.
        fresh = root / "out" / "k8-dbg" / "testlogs" / "tests" / "x" / "x_test" / "test.xml"
        fresh.parent.mkdir(parents=True)
        fresh.write_text(GTEST_XML.format(name="Fresh", body="/>"))
        stale = self.repo / "bazel-testlogs" / "tests" / "old" / "test.xml"
        stale.parent.mkdir(parents=True)
        stale.write_text(GTEST_XML.format(name="Stale", body='><failure message="old"/></testcase>'))
        self.log = root / "bazel.log"
        self.env = dict(os.environ, PATH=f"{root / 'bin'}:{os.environ['PATH']}", FAKE_BAZEL_LOG=str(self.log),
                        FAKE_BAZEL_XML=str(fresh), FAKE_BAZEL_TESTLOGS=str(stale.parent.parent.parent))

    def tearDown(self):
        self.tmp.cleanup()

    def run_test(self, *args, bazel_exit=0):
        env = dict(self.env, FAKE_BAZEL_EXIT=str(bazel_exit))
        result = subprocess.run(["bash", str(self.repo / "tools" / "test"), *args], capture_output=True, text=True,
                                env=env, cwd=self.tmp.name)
        calls = [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []
        tests = [c for c in calls if c[:1] == ["test"]]
        self.assertEqual(len(tests), 1, calls)
        return result, tests[0][1:]

    def split(self, bazel_args):
        """(options, target patterns) of `bazel test OPTIONS -- PATTERNS`."""
        self.assertIn("--", bazel_args)
        i = bazel_args.index("--")
        options = [a for a in bazel_args[:i] if not a.startswith("--build_event_json_file=")]
        return options, bazel_args[i + 1:]

    def test_no_arguments_test_everything(self):
        result, args = self.run_test()
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.split(args), ([], ["//..."]))

    def test_relative_and_negative_patterns_are_targets(self):
        result, args = self.run_test("tests/tensor/...", "-//tests/tensor:slow_test", "--keep_going")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(self.split(args), (["--keep_going"], ["tests/tensor/...", "-//tests/tensor:slow_test"]))

    def test_option_values_in_the_next_word_are_not_targets(self):
        _, args = self.run_test("--test_env", "PATH=/usr/bin", "-c", "dbg", "//tests/base/...")
        self.assertEqual(self.split(args), (["--test_env", "PATH=/usr/bin", "-c", "dbg"], ["//tests/base/..."]))

    def test_sanitize_config_in_one_or_two_words_gets_the_lsan_suppressions(self):
        suppressions = f"--test_env=LSAN_OPTIONS=suppressions={self.repo}/tests/lsan_suppressions.txt"
        for config in (["--config=sanitize"], ["--config", "sanitize"]):
            with self.subTest(config=config):
                self.log.unlink(missing_ok=True)
                _, args = self.run_test(*config, "//tests/tensor/...")
                self.assertEqual(self.split(args), ([*config, suppressions], ["//tests/tensor/..."]))

    def test_the_summary_counts_this_invocation_only(self):
        result, args = self.run_test("//tests/x:x_test", bazel_exit=3)
        self.assertEqual(result.returncode, 3, "bazel's status")
        self.assertEqual(len([a for a in args if a.startswith("--build_event_json_file=")]), 1, args)
        self.assertIn("test cases: 1 passed, 0 failed, 0 skipped", result.stdout)
        self.assertNotIn("S.Stale", result.stdout)

    def test_no_build_events_no_summary(self):
        result, _ = self.run_test("--bad_option", bazel_exit=2)
        self.assertEqual(result.returncode, 2)
        self.assertNotIn("test cases:", result.stdout)
        self.assertIn("no summary", result.stderr)


if __name__ == "__main__":
    unittest.main()
