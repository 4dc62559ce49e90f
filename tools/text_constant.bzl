"""Text files compiled into a binary as string constants."""

def cc_text_constant(name, src, symbol, visibility = None):
    """A cc_library holding the text of `src` as `extern const char symbol[]`.

    Its header, <name>.h, declares the constant. Task binaries carry their
    default config this way, so they run the same from any directory and on
    any machine they are copied to.
    """
    native.genrule(
        name = name + "_cc",
        srcs = [src],
        outs = [name + ".cc"],
        # A raw string literal: the text goes in unescaped (a text proto holds
        # no ")ts_text\"", which would end it early and fail to compile).
        cmd = "(echo '// Generated from $(location %s).'; " % src +
              "echo '#include \"%s/%s.h\"'; " % (native.package_name(), name) +
              "echo 'extern const char %s[] = R\"ts_text('; " % symbol +
              "cat $(location %s); " % src +
              "echo ')ts_text\";') > $@",
    )
    native.genrule(
        name = name + "_h",
        outs = [name + ".h"],
        cmd = "(echo '// Generated: the text of %s.'; echo '#pragma once'; " % src +
              "echo 'extern const char %s[];') > $@" % symbol,
    )
    native.cc_library(
        name = name,
        srcs = [name + ".cc"],
        hdrs = [name + ".h"],
        visibility = visibility,
    )
