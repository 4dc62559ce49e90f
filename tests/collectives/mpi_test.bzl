"""mpi_test: one sh_test per world size, running a gtest binary under mpirun."""

def mpi_test(name, binary, ranks, expected_ranks = None, mpirun_args = [], env = {}, **kwargs):
    """Declares <name>_np<N> for each N in ranks, and a test_suite <name>.

    Args:
      name: the suite's name.
      binary: a cc_binary whose main is :mpi_test_main.
      ranks: world sizes to run.
      expected_ranks: dict N -> "first-last" ranks that must report success
        (default: all).
      mpirun_args: extra mpirun arguments.
      env: test environment.
      **kwargs: passed to each sh_test (size, tags, ...).
    """
    tests = []
    for n in ranks:
        expected = (expected_ranks or {}).get(n, "0-%d" % (n - 1))
        native.sh_test(
            name = "%s_np%d" % (name, n),
            srcs = ["//tests/collectives:mpi_test.sh"],
            args = [str(n), "$(location %s)" % binary, expected, "--"] + mpirun_args,
            data = [binary],
            env = env,
            # Ranks oversubscribe this machine's cores; run alone.
            tags = ["exclusive"] + kwargs.pop("tags", []),
            **kwargs
        )
        tests.append(":%s_np%d" % (name, n))
    native.test_suite(name = name, tests = tests)
