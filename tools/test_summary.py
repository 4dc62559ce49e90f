"""Summarizes gtest XML reports: totals, failed cases, skipped cases
grouped by the reason they gave (CUDA tests skip without a GPU), and
disabled ones (DISABLED_ in their name, which gtest lists but does not run).

Usage: test_summary.py DIR   (every *.xml under DIR: the folder tools/gpu_test
                              writes, or Bazel's testlogs)
       test_summary.py --build_events FILE
                             (the reports of the tests one Bazel invocation
                              ran or took from its cache, as its
                              --build_event_json_file lists them: tools/test)
"""
import collections
import json
import pathlib
import re
import sys
import urllib.parse
import xml.etree.ElementTree as ET

# --runs_per_test and sharding write DIR/run_K_of_N/ (or shard_) folders
# beside or instead of DIR/test.xml, and Bazel removes neither when a later
# invocation writes the other.
_REPEAT_DIR = re.compile(r"^(run|shard)_\d+_of_(\d+)$")


def reports(root: str):
    """The XML reports of each test's latest invocation: of the groups in its
    folder (its own test.xml; the run_K_of_N folders of one N; the
    shard_K_of_N folders of one N), the one written last."""
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for path in sorted(pathlib.Path(root).rglob("*.xml")):
        match = _REPEAT_DIR.match(path.parent.name)
        if match:
            groups[path.parent.parent][f"{match.group(1)}_of_{match.group(2)}"].append(path)
        else:
            groups[path.parent]["plain"].append(path)
    for test_dir in sorted(groups):
        yield from max(groups[test_dir].values(), key=lambda paths: max(p.stat().st_mtime_ns for p in paths))


def invocation_reports(build_events: str):
    """The test.xml of every test result in a Bazel build event JSON file:
    the tests of that invocation only, whichever configuration's testlogs
    folder holds them; of a flaky test's attempts, the last."""
    last_attempt = {}
    with open(build_events, encoding="utf-8") as f:
        for line in f:
            event = json.loads(line)
            result_id = event.get("id", {}).get("testResult")
            if result_id is None:
                continue
            key = (result_id.get("label"), result_id.get("run"), result_id.get("shard"),
                   json.dumps(result_id.get("configuration"), sort_keys=True))
            xml = [o["uri"] for o in event.get("testResult", {}).get("testActionOutput", [])
                   if o.get("name") == "test.xml" and o.get("uri", "").startswith("file://")]
            attempt = result_id.get("attempt", 1)
            if xml and attempt >= last_attempt.get(key, (0, None))[0]:
                last_attempt[key] = (attempt, urllib.parse.unquote(urllib.parse.urlparse(xml[0]).path))
    return [pathlib.Path(path) for _, path in sorted(last_attempt.values(), key=lambda v: v[1])]


def main(xml_paths) -> int:
    passed, failed, unreadable = 0, [], []
    skipped = collections.defaultdict(list)
    disabled = []
    for xml_path in xml_paths:
        try:
            tree = ET.parse(xml_path).getroot()
        except (ET.ParseError, OSError) as e:
            # Its cases are missing from the totals: say so.
            unreadable.append(f"{xml_path} ({e})")
            continue
        for case in tree.iter("testcase"):
            name = f"{case.get('classname')}.{case.get('name')}"
            skip = case.find("skipped")
            # gtest lists a DISABLED_ test it did not run as status="notrun"
            # result="suppressed": neither passed nor skipped for a reason.
            if case.get("status") == "notrun" or case.get("result") == "suppressed":
                disabled.append(name)
            elif skip is not None or case.get("result") == "skipped":
                message = (skip.get("message") if skip is not None else "") or ""
                # gtest writes "file:line", the reason, then any traces.
                lines = [l for l in message.split("Google Test trace:")[0].splitlines() if l.strip()]
                reason = lines[-1].strip() if lines else "(no reason given)"
                skipped[reason].append(name)
            # Bazel writes <error> for a test that crashed, timed out or was
            # killed before it wrote its own report.
            elif case.find("failure") is not None or case.find("error") is not None:
                failed.append(name)
            else:
                passed += 1
    n_skipped = sum(len(v) for v in skipped.values())
    print(f"test cases: {passed} passed, {len(failed)} failed, {n_skipped} skipped, {len(disabled)} disabled")
    for name in failed:
        print(f"  FAILED  {name}")
    for reason, cases in sorted(skipped.items()):
        print(f"  skipped {len(cases):4d}: {reason}")
        for name in cases[:3]:
            print(f"           e.g. {name}")
    if disabled:
        print(f"  disabled {len(disabled):3d}: DISABLED_ in the name")
        for name in disabled[:3]:
            print(f"           e.g. {name}")
    for report in unreadable:
        print(f"  unreadable report, not counted: {report}")
    return 1 if failed else 0


def cli(argv) -> int:
    if len(argv) == 2 and argv[0] == "--build_events":
        try:
            paths = invocation_reports(argv[1])
        except (OSError, ValueError) as e:
            print(f"test_summary: cannot read the build events {argv[1]}: {e}", file=sys.stderr)
            return 2
        if not paths:
            print("test cases: no test reports in this invocation")
            return 0
        return main(paths)
    if len(argv) > 1 or (argv and not argv[0]):
        # An empty folder name would summarize whatever lies under the
        # current one.
        print("usage: test_summary.py DIR | --build_events FILE (DIR not empty)", file=sys.stderr)
        return 2
    return main(reports(argv[0] if argv else "bazel-testlogs"))


if __name__ == "__main__":
    sys.exit(cli(sys.argv[1:]))
