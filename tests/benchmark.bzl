"""cc_benchmark: a Google Benchmark binary (`bazel run` it; tools/gpu_test
carries it to the GPU machine).

Linked like the tests, against one shared object per library, rather than
statically as cc_binary would: the GPU bundle then holds our code once.
"""

def cc_benchmark(name, deps = [], **kwargs):
    native.cc_binary(
        name = name,
        testonly = True,
        linkstatic = False,
        deps = deps + ["@benchmark"],
        **kwargs
    )
