"""tools/coverage's reading of gcov's JSON: a profile's object from its
-fprofile-dir name; only the workspace's sources outside tests/ count; a
line's counts add up over the objects that compile it (a header in many);
functions never called, template instances and overloads of one line
together; `show` lists a file's lines that never ran, with their source."""
import json
import os
import tempfile
import unittest
from unittest import mock

import tool_module

coverage = tool_module.load("coverage")

EXECROOT = "/cache/coverage/execroot/trainstack"


def document(file, lines, functions=()):
    return {
        "files": [{
            "file": file,
            "lines": [{"line_number": n, "count": c} for n, c in lines],
            "functions": [{"demangled_name": name, "start_line": start, "execution_count": c}
                          for name, start, c in functions],
        }]
    }


class CoverageTest(unittest.TestCase):

    def test_a_profile_names_its_object(self):
        self.assertEqual(
            coverage.object_path("#proc#self#cwd#bazel-out#k8-opt#bin#base#_objs#json#json.pic.gcda", EXECROOT),
            f"{EXECROOT}/bazel-out/k8-opt/bin/base/_objs/json/json.pic.gcda")
        self.assertEqual(coverage.object_path("#work#x#y.pic.gcda", EXECROOT), "/work/x/y.pic.gcda")

    def test_only_the_workspace_sources_outside_tests_count(self):
        self.assertEqual(coverage.workspace_source(f"{EXECROOT}/tensor/ops.h", EXECROOT), "tensor/ops.h")
        self.assertEqual(coverage.workspace_source("base/json.cc", EXECROOT), "base/json.cc")
        for outside in ("/usr/include/c++/12/vector", f"{EXECROOT}/external/abseil/absl/status/status.h",
                        "bazel-out/k8-opt/bin/tasks/common/config.pb.h", f"{EXECROOT}/tests/tensor/testing.h"):
            self.assertIsNone(coverage.workspace_source(outside, EXECROOT), outside)

    def test_counts_add_up_over_objects(self):
        lines, functions = {}, {}
        # A header compiled into two objects: line 3 runs only through the
        # second; an inline function's two instances share line 2.
        coverage.add_gcov_document(
            document(f"{EXECROOT}/tensor/functors.h", [(2, 5), (3, 0), (4, 0)],
                     [("ts::f<float>()", 2, 5), ("ts::g()", 4, 0)]), EXECROOT, lines, functions)
        coverage.add_gcov_document(
            document("tensor/functors.h", [(2, 1), (3, 7), (4, 0)], [("ts::f<double>()", 2, 0), ("ts::g()", 4, 0)]),
            EXECROOT, lines, functions)
        coverage.add_gcov_document(document("/usr/include/c++/12/vector", [(10, 0)]), EXECROOT, lines, functions)
        self.assertEqual(list(lines), ["tensor/functors.h"])
        self.assertEqual(lines["tensor/functors.h"], {2: 6, 3: 7, 4: 0})
        files = coverage.summary(lines, functions)
        self.assertEqual(files, {"tensor/functors.h": {"lines": 3, "missed": [4], "uncalled": [[4, "ts::g()"]]}})

    def test_show_prints_the_lines_that_never_ran(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "base"))
            with open(os.path.join(root, "base", "a.cc"), "w") as f:
                f.write("int a() {\n  if (x) {\n    return 1;\n  }\n  return 2;\n}\n")
            report = os.path.join(root, "coverage.json")
            with open(report, "w") as f:
                json.dump({"files": {"base/a.cc": {"lines": 4, "missed": [3, 5], "uncalled": [[1, "a()"]]}}}, f)
            with mock.patch.object(coverage, "ROOT", root), mock.patch.object(coverage, "REPORT", report), \
                    mock.patch("builtins.print") as printed:
                coverage.show(["base/a.cc"])
            text = "\n".join(" ".join(str(a) for a in call.args) for call in printed.call_args_list)
            self.assertEqual(
                text, "== base/a.cc: 2 of 4 lines never ran\n"
                "     3:     return 1;\n   ...\n     5:   return 2;\nnever called (line 1): a()")
            with mock.patch.object(coverage, "ROOT", root), mock.patch.object(coverage, "REPORT", report), \
                    self.assertRaises(SystemExit):
                coverage.show(["base/b.cc"])


if __name__ == "__main__":
    unittest.main()
