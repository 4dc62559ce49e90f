"""Summarizes gtest XML reports: totals, failed cases, and skipped cases
grouped by the reason they gave (CUDA tests skip without a GPU).

Usage: test_summary.py DIR   (every *.xml under DIR; Bazel's testlogs, or
the folder tools/gpu_test writes)
"""
import collections
import pathlib
import re
import sys
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


def main(root: str) -> int:
    passed, failed, unreadable = 0, [], []
    skipped = collections.defaultdict(list)
    for xml_path in reports(root):
        try:
            tree = ET.parse(xml_path).getroot()
        except ET.ParseError as e:
            # Its cases are missing from the totals: say so.
            unreadable.append(f"{xml_path} ({e})")
            continue
        for case in tree.iter("testcase"):
            name = f"{case.get('classname')}.{case.get('name')}"
            skip = case.find("skipped")
            if skip is not None or case.get("result") == "skipped":
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
    print(f"test cases: {passed} passed, {len(failed)} failed, {n_skipped} skipped")
    for name in failed:
        print(f"  FAILED  {name}")
    for reason, cases in sorted(skipped.items()):
        print(f"  skipped {len(cases):4d}: {reason}")
        for name in cases[:3]:
            print(f"           e.g. {name}")
    for report in unreadable:
        print(f"  unreadable report, not counted: {report}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bazel-testlogs"))
