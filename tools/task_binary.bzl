"""task_binary: a task's cc_binary and its twin for the GPU bundle.

`name` links our code statically and is stamped with the commit: it runs when
copied alone to any machine (tests/tasks/standalone_test.sh). `name_shared`
is the same program linked against one shared object per library, as the
tests and benchmarks are, so that `tools/gpu_test bundle` carries our code
(the CUDA kernels above all) once for every binary instead of once per task
(about 5 MiB packed each). It is tagged manual: only the bundle builds it.
"""

def task_binary(name, **kwargs):
    native.cc_binary(name = name, stamp = 1, **kwargs)
    native.cc_binary(
        name = name + "_shared",
        stamp = 1,
        linkstatic = False,
        tags = ["manual"],
        **kwargs
    )
