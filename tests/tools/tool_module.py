"""The developer scripts under tools/ are Python files without a .py suffix,
so their tests import them by path: tool_path(name) is the script (or any
file under tools/) in the test's runfiles, load(name) the script as a module
(its main() not run), run(name, ...) the script as a program."""
import importlib.machinery
import importlib.util
import os
import subprocess
import sys


def tool_path(name):
    return os.path.join(os.environ.get("TEST_SRCDIR", ""), "trainstack", "tools", name)


def load(name):
    loader = importlib.machinery.SourceFileLoader(name, tool_path(name))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def run(name, *args, env=None, cwd=None):
    """The finished process, its output captured as text."""
    return subprocess.run([sys.executable, tool_path(name), *args], capture_output=True, text=True, env=env, cwd=cwd)
