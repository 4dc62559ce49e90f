"""tools/tidy's compilation database from Bazel's aquery output: clang++ for
gcc, the workspace as the directory, external repositories through the
output base, GCC-only options and dependency/output files dropped, one entry per
source (generated ones left out), each with the target that compiles it."""
import unittest

import tool_module

tidy = tool_module.load("tidy")


def action(target_id, source, extra=()):
    return {
        "targetId": target_id,
        "arguments": [
            "/usr/bin/gcc", "-U_FORTIFY_SOURCE", "-MD", "-MF", f"bazel-out/k8-opt/bin/{source}.d",
            "-frandom-seed=bazel-out/k8-opt/bin/x.o", "-iquote", ".", "-iquote", "external/abseil", "-isystem",
            "external/cuda/include", *extra, "-fno-canonical-system-headers", "-std=c++20", "-c", source, "-o",
            f"bazel-out/k8-opt/bin/{source}.o"
        ],
    }


class CompileCommandsTest(unittest.TestCase):

    def test_commands_for_clang_from_the_workspace(self):
        aquery = {
            "targets": [{"id": 1, "label": "//base:json"}, {"id": 2, "label": "//tensor/cpu:backend"}],
            "actions": [
                action(1, "base/json.cc"),
                action(2, "tensor/cpu/elementwise.cc", extra=["-fvect-cost-model=dynamic", "-O3"]),
                # A second action for one source (another configuration): the first wins.
                action(2, "base/json.cc", extra=["-DSECOND"]),
                action(1, "bazel-out/k8-opt/bin/tasks/common/config.pb.cc"),
                action(1, "external/abseil/absl/strings/str_cat.cc"),
            ],
        }
        database = tidy.compile_commands(aquery, "/ws", "/output/base")
        self.assertEqual([e["file"] for e in database], ["base/json.cc", "tensor/cpu/elementwise.cc"])
        json_entry, elementwise = database
        self.assertEqual(json_entry["directory"], "/ws")
        self.assertEqual(json_entry["target"], "//base:json")
        self.assertEqual(json_entry["arguments"], [
            "clang++", "-U_FORTIFY_SOURCE", "-iquote", ".", "-iquote", "/output/base/external/abseil", "-isystem",
            "/output/base/external/cuda/include", "-std=c++20", "-c", "base/json.cc"
        ])
        self.assertEqual(elementwise["target"], "//tensor/cpu:backend")
        self.assertIn("-O3", elementwise["arguments"])
        self.assertNotIn("-fvect-cost-model=dynamic", elementwise["arguments"])


if __name__ == "__main__":
    unittest.main()
