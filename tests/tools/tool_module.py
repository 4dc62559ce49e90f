"""The developer scripts under tools/ are Python files without a .py suffix,
so their tests import them by path: tool_path(name) is the script in the
test's runfiles, load(name) the script as a module (its main() not run)."""
import importlib.machinery
import importlib.util
import os


def tool_path(name):
    return os.path.join(os.environ.get("TEST_SRCDIR", ""), "trainstack", "tools", name)


def load(name):
    loader = importlib.machinery.SourceFileLoader(name, tool_path(name))
    spec = importlib.util.spec_from_loader(name, loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module
