"""cc_proto: protoc into .pb.cc/.pb.h and a cc_library around them.

Native cc_proto_library needs protobuf's source tree; this rule runs Debian's
protoc (matched to the libprotobuf it links) on one or more .proto files.
"""

def _protoc_cc_impl(ctx):
    headers = []
    sources = []
    for src in ctx.files.srcs:
        stem = src.basename[:-len(".proto")]
        headers.append(ctx.actions.declare_file(stem + ".pb.h"))
        sources.append(ctx.actions.declare_file(stem + ".pb.cc"))

    # protoc writes <out>/<path relative to proto_path>; with the workspace root
    # as proto_path that lands next to the declared outputs.
    ctx.actions.run(
        executable = ctx.file._protoc,
        arguments = [
            "--proto_path=.",
            "--cpp_out=" + ctx.bin_dir.path,
        ] + [src.path for src in ctx.files.srcs],
        inputs = ctx.files.srcs + ctx.files.deps,
        outputs = headers + sources,
        mnemonic = "Protoc",
        progress_message = "Generating C++ from %s" % ", ".join([s.short_path for s in ctx.files.srcs]),
    )
    return [
        DefaultInfo(files = depset(headers + sources)),
        OutputGroupInfo(headers = depset(headers), sources = depset(sources)),
    ]

_protoc_cc = rule(
    implementation = _protoc_cc_impl,
    attrs = {
        "srcs": attr.label_list(allow_files = [".proto"]),
        "deps": attr.label_list(allow_files = [".proto"]),
        "_protoc": attr.label(
            default = "@protobuf//:protoc",
            allow_single_file = True,
        ),
    },
)

def cc_proto(name, srcs, proto_deps = [], deps = [], **kwargs):
    """A cc_library of the C++ classes protoc generates for srcs.

    Args:
      name: the cc_library's name.
      srcs: .proto files in this package.
      proto_deps: .proto files that srcs import.
      deps: cc_proto targets for those imports.
      **kwargs: passed to the cc_library.
    """
    _protoc_cc(
        name = name + "_generated",
        srcs = srcs,
        deps = proto_deps,
        visibility = ["//visibility:private"],
    )
    for group in ("headers", "sources"):
        native.filegroup(
            name = "%s_%s" % (name, group),
            srcs = [":" + name + "_generated"],
            output_group = group,
            visibility = ["//visibility:private"],
        )
    native.cc_library(
        name = name,
        srcs = [":" + name + "_sources"],
        hdrs = [":" + name + "_headers"],
        deps = deps + ["@protobuf"],
        **kwargs
    )
