"""cuda_library: .cu sources compiled by nvcc into objects that a cc_library links.

Each .cu file is compiled on its own (whole-program device code, no -rdc): our
kernels are launched from host wrappers in the same file, so no device link step
is needed and a cc_library can take the objects as they are. Code is built for
sm_80 (A100) and sm_90 (H100/H200), with compute_90 PTX so newer GPUs can JIT it.
"""

_NVCC = "/usr/local/cuda/bin/nvcc"

_GENCODE = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=[sm_90,compute_90]",
]

_NVCC_FLAGS = [
    "-std=c++20",
    "-O3",
    "-lineinfo",
    "--expt-relaxed-constexpr",
    "--extended-lambda",
    "-Xcompiler=-fPIC",
    "-Xcompiler=-Wall",
    "-DNDEBUG",
    # The element-wise kernels are instantiated per dtype and op, and their
    # machine code is repetitive: size-tuned fatbin compression shrinks
    # binary.o from 14.4 MB to 1.5 MB (the default mode compresses next to
    # nothing). The driver decompresses a module when it first loads it; this
    # mode needs driver 580 or newer, which CUDA 13 needs anyway.
    "--compress-mode=size",
]

def _cuda_objects_impl(ctx):
    compilation = cc_common.merge_cc_infos(
        cc_infos = [dep[CcInfo] for dep in ctx.attr.deps],
    ).compilation_context
    include_flags = (
        ["-I.", "-I" + ctx.bin_dir.path] +
        ["-I" + path for path in compilation.quote_includes.to_list()] +
        ["-I" + path for path in compilation.includes.to_list()] +
        [flag for path in compilation.system_includes.to_list() for flag in ("-isystem", path)] +
        ["-D" + define for define in compilation.defines.to_list()]
    )
    inputs = depset(ctx.files.hdrs, transitive = [compilation.headers])
    objects = []
    for src in ctx.files.srcs:
        obj = ctx.actions.declare_file("_cuda_objs/%s/%s.o" % (ctx.label.name, src.basename[:-len(".cu")]))
        ctx.actions.run_shell(
            # nvcc finds cicc and ptxas next to its real path, so it runs from
            # the toolkit itself; the repository's copy is an input only so
            # that a toolkit upgrade rebuilds the objects. Its temporary files
            # are named by its process id, which is the same in every
            # sandbox's PID namespace while /tmp is shared: each compile gets
            # a TMPDIR of its own, or two at once overwrite each other's.
            command = 'tmp=$(mktemp -d) && trap \'rm -rf "$tmp"\' EXIT && TMPDIR="$tmp" "$@"',
            arguments = [_NVCC] + _GENCODE + _NVCC_FLAGS + ctx.attr.copts + include_flags +
                        ["-c", src.path, "-o", obj.path],
            inputs = depset([src, ctx.file._nvcc], transitive = [inputs]),
            outputs = [obj],
            mnemonic = "NvccCompile",
            progress_message = "Compiling CUDA %s" % src.short_path,
            use_default_shell_env = True,
        )
        objects.append(obj)
    return [DefaultInfo(files = depset(objects))]

_cuda_objects = rule(
    implementation = _cuda_objects_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".cu"]),
        "hdrs": attr.label_list(allow_files = [".h"]),
        "deps": attr.label_list(providers = [CcInfo]),
        "copts": attr.string_list(),
        "_nvcc": attr.label(
            default = "@cuda//:nvcc",
            allow_single_file = True,
        ),
    },
)

def cuda_library(name, srcs, hdrs = [], deps = [], copts = [], **kwargs):
    """A cc_library whose .cu sources are compiled by nvcc.

    Args:
      name: the cc_library's name.
      srcs: .cu files, and private .h headers (.cuh is not accepted: the
        headers also go to a cc_library, which takes .h only).
      hdrs: public headers, usable from C++ and CUDA.
      deps: cc_library dependencies, visible to both nvcc and the linker.
      copts: extra nvcc flags.
      **kwargs: passed to the cc_library (visibility, testonly, ...).
    """
    cu_srcs = [s for s in srcs if s.endswith(".cu")]
    private_hdrs = [s for s in srcs if not s.endswith(".cu")]
    _cuda_objects(
        name = name + "_objects",
        srcs = cu_srcs,
        hdrs = hdrs + private_hdrs,
        deps = deps + ["@cuda//:headers"],
        copts = copts,
        visibility = ["//visibility:private"],
        testonly = kwargs.get("testonly", False),
    )
    native.cc_library(
        name = name,
        srcs = [":" + name + "_objects"] + private_hdrs,
        hdrs = hdrs,
        deps = deps + ["@cuda//:cudart"],
        **kwargs
    )
