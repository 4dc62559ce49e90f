"""tools/gpu_test's checks that need no GPU and no bundle, on a copy of the
script in an empty repository: GPU_TEST_JOBS must be a whole number >= 1
(it divides the cores); `profile` names a kernel tracer library that is
missing or that ldd cannot read instead of passing it as loadable; a bundle
carried again replaces the one unpacked before (a warm machine keeps it);
`preflight` says what the machine is and counts the bundled files that
cannot load."""
import os
import pathlib
import shutil
import subprocess
import tarfile
import tempfile
import time
import unittest

from tests.tools import tool_module


class GpuTestTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.repo = pathlib.Path(self.tmp.name, "repo")
        (self.repo / "tools").mkdir(parents=True)
        shutil.copy(tool_module.tool_path("gpu_test"), self.repo / "tools" / "gpu_test")
        # An unpacked bundle without binaries, stamped as unpacked: with no
        # newer archive the verbs do not unpack it again.
        self.unpacked = self.repo / ".gpu-run" / "unpacked"
        (self.unpacked / "bin").mkdir(parents=True)
        (self.unpacked / "lib").mkdir()
        (self.unpacked / ".unpacked").touch()
        self.tracer = self.unpacked / "lib" / "libkernel_trace.so"

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

    def test_a_bundle_carried_again_replaces_the_unpacked_one(self):
        (self.unpacked / "bin" / "test.old").write_text("old\n")
        staged = pathlib.Path(self.tmp.name, "stage")
        (staged / "bin").mkdir(parents=True)
        (staged / "lib").mkdir()
        (staged / "bin" / "test.new").write_text("new\n")
        (self.repo / ".gpu").mkdir()
        archive = self.repo / ".gpu" / "bundle.tar.xz"
        with tarfile.open(archive, "w:xz") as tar:
            tar.add(staged / "bin", "bin")
            tar.add(staged / "lib", "lib")
        # Unpacked before this archive was carried.
        stamp = self.unpacked / ".unpacked"
        os.utime(stamp, (time.time() - 100, time.time() - 100))
        os.utime(archive, (time.time() - 50, time.time() - 50))
        result = self.run_tool("preflight", PATH=self.path_without_nvidia_smi())
        self.assertTrue((self.unpacked / "bin" / "test.new").exists(), result.stderr)
        self.assertFalse((self.unpacked / "bin" / "test.old").exists())
        # Not a shared object: counted as one that cannot load, named.
        device = (self.repo / ".gpu-run" / "out" / "device.txt").read_text()
        self.assertIn("no nvidia-smi: no GPU here", device)
        self.assertIn("bundled files that cannot load: 1", device)
        self.assertIn("test.new", device)
        self.assertEqual(result.returncode, 1)
        # Unpacked now and stamped: the same archive is not unpacked again.
        (self.unpacked / "bin" / "test.extra").write_text("kept\n")
        self.run_tool("preflight", PATH=self.path_without_nvidia_smi())
        self.assertTrue((self.unpacked / "bin" / "test.extra").exists())

    def path_without_nvidia_smi(self):
        """PATH with nvidia-smi hidden. On a GPU host it sits in /usr/bin with
        bash and tar, so its directory is replaced by a copy made of links to
        everything else there rather than dropped."""
        dirs = []
        for index, directory in enumerate(os.environ["PATH"].split(":")):
            if pathlib.Path(directory, "nvidia-smi").exists():
                shadow = pathlib.Path(self.tmp.name, f"path-{index}")
                shadow.mkdir(exist_ok=True)
                for entry in pathlib.Path(directory).iterdir():
                    if entry.name != "nvidia-smi" and not (shadow / entry.name).exists():
                        (shadow / entry.name).symlink_to(entry)
                directory = str(shadow)
            dirs.append(directory)
        return ":".join(dirs)


if __name__ == "__main__":
    unittest.main()
