"""tools/kernel_profile: `compare` and `show` against golden tables on fixture
traces (kernel names as cuDNN, PyTorch and our kernels spell them), the kind
each name is put in, one clear line and exit status 1 for bad input, and the
tracer library: it loads and exports the entry point the CUDA driver looks up
by name (a C++-mangled name would leave every trace unwritten, silently).
Tracing itself needs a GPU: tools/gpu_test profile runs it there."""
import ctypes
import json
import os
import tempfile
import unittest

from tests.tools import tool_module

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = tool_module.tool_path("cupti/libkernel_trace.so")


kp = tool_module.load("kernel_profile")


def fixture(name):
    return os.path.join(HERE, name)


def tool(*args, env=None, cwd=None):
    return tool_module.run("kernel_profile", *args, env=env, cwd=cwd)


class GoldenTest(unittest.TestCase):
    def expect_golden(self, args, golden):
        # Run in the fixtures' folder: the golden output names the files.
        result = tool(*args, cwd=HERE)
        self.assertEqual(result.returncode, 0, result.stderr)
        with open(fixture(golden)) as f:
            self.assertEqual(result.stdout, f.read())

    def test_compare(self):
        self.expect_golden(["compare", "ours.json", "torch.json", "--top", "4"], "compare.golden")

    def test_show_a_trace_without_windows(self):
        self.expect_golden(["show", "whole_run.json", "--top", "3"], "show.golden")


class KindTest(unittest.TestCase):
    def test_kinds(self):
        cases = {
            "[memcpy HtoD]": "memcpy/memset",
            "ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevKernelArgsStorage<4096ul>)": "nccl",
            "sm90_xmma_wgrad_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc": "conv wgrad",
            "void cudnn::cnn::wgrad_alg0_engine<float, 128, 5, 5, 3, 3, 3, false, 512>(int)": "conv wgrad",
            "sm80_xmma_dgrad_implicit_gemm_indexed_f16f16_f16f32_f32_nhwckrsc_nchw": "conv dgrad",
            "void implicit_convolve_sgemm<float, float, 1024, 5, 5, 3, 3, 3, 1, false, false, true>(int)": "conv fprop",
            "void cudnn::ops::nchwToNhwcKernel<__half, __half, float, false, true>(cudnn::ops::nchw2nhwc_params_t<float>)":
                "layout change",
            "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, 512, true, 1>(cudnnTensorStruct)": "batch norm",
            "void at::native::batch_norm_collect_statistics_channels_last_kernel<c10::Half, float, float, 4>()":
                "batch norm",
            "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64": "gemm",
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedSgdMathFunctor>()": "optimizer",
            "void at::native::amp_update_scale_cuda_kernel(float*, int*, int const*, double, double, int)": "optimizer",
            "void at::native::vectorized_elementwise_kernel<4, launch_clamp_scalar(c10::Half)#1}>(int)": "elementwise",
            "void ts::cuda::(anonymous namespace)::flat_kernel<8, __half, ts::ReluOp, __half>(long)": "elementwise",
            "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, c10::Half, float, float>()": "softmax/loss",
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t>>()":
                "reduction",
            # Ours, as our kernels' templates demangle.
            "void ts::cuda::(anonymous namespace)::flat_kernel<8, __half, ts::cuda::Identity, float>"
            "(long, __half*, ts::cuda::Identity, ts::cuda::Input<float>)": "copy/cast",
            "void ts::cuda::elementwise_internal::strided_kernel<4, float, ts::AddFunctor, float, float>()":
                "elementwise",
            "void ts::optim::cuda::(anonymous namespace)::scale_kernel<__half>"
            "(ts::optim::cuda::(anonymous namespace)::TensorEntry const*, int*)": "optimizer",
            "void ts::optim::cuda::(anonymous namespace)::fused_sgd_kernel<float>(int)": "optimizer",
            "void ts::nn::functional::(anonymous namespace)::max_backward<__half>"
            "(ts::nn::functional::Pool2dGeometry, ts::nn::functional::PoolDividers, __half const*, int const*, __half*)":
                "pooling",
            "void ts::cuda::(anonymous namespace)::cross_entropy_kernel<__half, float>(__half const*, float*)":
                "softmax/loss",
            "void ts::cuda::(anonymous namespace)::reduce_kernel<float, float>(float const*, float*)": "reduction",
            "void ts::cuda::(anonymous namespace)::index_copy_kernel<float>(long const*, float*)": "indexing",
            "void ts::cuda::(anonymous namespace)::random_kernel<float>(ts::PhiloxKey, float*)": "elementwise",
            # PyTorch's casts and cuDNN's padding.
            "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::"
            "direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}>>(int)": "copy/cast",
            "void cudnn::engines_precompiled::nhwcAddPaddingKernel<__half, __half, float, true, "
            "cudnn::reduced_divisor>(int, int, int, int, __half const*, __half*)": "layout change",
            "void some_library::mystery(int)": "other",
        }
        for name, kind in cases.items():
            self.assertEqual(kp.kind_of(name), kind, name)


class BadInputTest(unittest.TestCase):
    def expect_one_line(self, args, fragment):
        result = tool(*args, env=dict(os.environ, KERNEL_TRACE_LIB=LIBRARY))
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.strip().splitlines()), 1, result.stderr)
        self.assertIn(fragment, result.stderr)

    def test_missing_file(self):
        self.expect_one_line(["show", fixture("absent.json")], "cannot read")

    def test_not_json(self):
        self.expect_one_line(["show", fixture("compare.golden")], "is not JSON")

    def test_another_kind_of_report(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump({"format": "trainstack.ddp_bench.v1", "rows": []}, f)
        try:
            self.expect_one_line(["compare", fixture("ours.json"), f.name], "is not a kernel trace")
        finally:
            os.unlink(f.name)

    def test_windows_against_a_whole_run(self):
        self.expect_one_line(["compare", fixture("ours.json"), fixture("whole_run.json")], "cannot be set side by side")

    def test_bad_labels(self):
        self.expect_one_line(["compare", fixture("ours.json"), fixture("torch.json"), "--labels", "ours"],
                             "--labels takes two names")

    def test_run_without_a_command(self):
        self.expect_one_line(["run", "out.json", "--"], "no command")

    def test_run_of_a_program_that_never_starts_cuda(self):
        # The driver never loads the tracer, so no trace: said in one line.
        with tempfile.TemporaryDirectory() as d:
            result = tool("run", os.path.join(d, "trace.json"), "--", "true",
                          env=dict(os.environ, KERNEL_TRACE_LIB=LIBRARY))
            self.assertEqual(result.returncode, 1)
            self.assertIn("wrote no trace", result.stderr)


class LibraryTest(unittest.TestCase):
    @unittest.skipIf(os.environ.get("TS_SANITIZERS"),
                     "built under --config=sanitize, the library needs the sanitizers' runtimes loaded before "
                     "any other library, which this Python process cannot do")
    def test_exports_the_driver_entry_point(self):
        library = ctypes.CDLL(LIBRARY)
        self.assertTrue(hasattr(library, "InitializeInjection"))


if __name__ == "__main__":
    unittest.main()
