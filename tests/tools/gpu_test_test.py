"""tools/gpu_test's checks that need no GPU and no bundle, on a copy of the
script in an empty repository: GPU_TEST_JOBS must be a whole number >= 1
(it divides the cores), and `profile` names a kernel tracer library that is
missing or that ldd cannot read instead of passing it as loadable."""
import os
import pathlib
import shutil
import subprocess
import tempfile
import unittest

from tests.tools import tool_module


class GpuTestTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = pathlib.Path(self.tmp.name, "repo")
        (self.repo / "tools").mkdir(parents=True)
        shutil.copy(tool_module.tool_path("gpu_test"), self.repo / "tools" / "gpu_test")
        # An unpacked bundle without binaries: `profile` does not unpack it again.
        (self.repo / ".gpu-run" / "unpacked" / "bin").mkdir(parents=True)
        (self.repo / ".gpu-run" / "unpacked" / "lib").mkdir()
        self.tracer = self.repo / ".gpu-run" / "unpacked" / "lib" / "libkernel_trace.so"

    def tearDown(self):
        self.tmp.cleanup()

    def run_tool(self, *args, **env):
        environ = {k: v for k, v in os.environ.items() if k not in ("OUT", "GPU_TEST_JOBS")}
        return subprocess.run(["bash", str(self.repo / "tools" / "gpu_test"), *args], capture_output=True, text=True,
                              env=dict(environ, **env), cwd=self.tmp.name, timeout=60)

    def test_gpu_test_jobs_must_be_a_count(self):
        for jobs in ("0", "-1", "four"):
            with self.subTest(jobs=jobs):
                result = self.run_tool("run", GPU_TEST_JOBS=jobs)
                self.assertEqual(result.returncode, 2, result.stderr)
                self.assertEqual(result.stderr, f"tools/gpu_test: GPU_TEST_JOBS={jobs}: must be a whole number >= 1\n")
                self.assertEqual(result.stdout, "", "nothing ran")

    def test_a_missing_tracer_library_is_named(self):
        result = self.run_tool("profile", "cpu")
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"tools/gpu_test: {self.tracer}: no such file", result.stderr)

    def test_a_tracer_library_ldd_cannot_read_is_named(self):
        self.tracer.write_text("not a shared object\n")
        result = self.run_tool("profile", "cpu")
        self.assertEqual(result.returncode, 1)
        self.assertIn(f"tools/gpu_test: ldd {self.tracer} failed: ", result.stderr)


if __name__ == "__main__":
    unittest.main()
