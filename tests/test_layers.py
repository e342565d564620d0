"""The layer rules (docs/CONTRACTS.md), as the import-linter contracts in pyproject.toml: kernels
imports no Qt, no services, no explorer and no cli; services imports no Qt, no cli and no explorer;
cli imports no Qt and no explorer; explorer imports no cli; the views' models import no Qt;
workload packages do not import each other. The second test proves the same contracts break on a
small package that does all that."""
import os
import subprocess
import sys
import textwrap
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYPROJECT = os.path.join(ROOT, "pyproject.toml")
# the lint-imports command, through the Python running the tests (no cache file in the repo)
LINT = ("import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True))")


def lint(cwd: str) -> subprocess.CompletedProcess:
    # the packages analysed are those found from `cwd` (import-linter puts it first on sys.path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", LINT, PYPROJECT], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def contracts() -> list[dict]:
    with open(PYPROJECT, "rb") as fh:
        return tomllib.load(fh)["tool"]["importlinter"]["contracts"]


def test_the_layer_contracts_are_kept():
    r = lint(ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"Contracts: {len(contracts())} kept, 0 broken" in r.stdout, r.stdout


def test_the_contracts_catch_violations(tmp_path):
    """A package tree with kernels, services, cli and explorer where every rule is broken once."""
    def module(dotted: str, source: str = "") -> None:
        parts = dotted.split(".")
        folder = tmp_path.joinpath(*parts)
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(1, len(parts)):
            tmp_path.joinpath(*parts[:i], "__init__.py").touch()
        folder.joinpath("__init__.py").write_text(textwrap.dedent(source))

    for root in ("kernels", "services", "cli", "explorer"):
        module(root)
    module("explorer", "import PyQt6\nimport pyqtgraph\n")
    module("kernels.leaky", "from PyQt6 import QtCore\n")   # kernels -> Qt
    module("kernels.upward", "import services\n")            # kernels -> the layer above
    module("services.widget", "import pyqtgraph\n")          # services -> Qt
    module("cli.window", "import explorer\n")                 # cli -> the app
    module("explorer.terminal", "import cli\n")               # the app -> the command line
    for qt_free in ("explorer.timing_log", "explorer.timing_text", "explorer.timing_breakdown"):
        module(qt_free)
    module("explorer.views")
    module("explorer.app")
    module("explorer.models", "from PyQt6 import QtWidgets\n")   # a view model -> Qt
    independent = [c for c in contracts() if c["type"] == "independence"]
    assert independent, "no independence contract in pyproject.toml"
    for c in independent:
        first, *others = c["modules"]
        for other in others:
            module(other)
        module(first, f"import {others[0]}\n")                # one workload -> another
    layered = [c for c in contracts() if c["type"] == "layers"]
    assert layered, "no layers contract in pyproject.toml"
    for c in layered:                                          # the lowest layer -> the highest
        for container in c["containers"]:
            names = [n.strip() for layer in c["layers"] for n in layer.split(":")]
            for name in names[:-1]:
                module(f"{container}.{name}")
            module(f"{container}.{names[-1]}", f"import {container}.{names[0]}\n")
    r = lint(str(tmp_path))
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"Contracts: 0 kept, {len(contracts())} broken" in r.stdout, r.stdout
    assert "kernels.leaky -> PyQt6" in r.stdout and "cli.window -> explorer" in r.stdout
    assert "kernels.upward -> services" in r.stdout and "services.widget -> pyqtgraph" in r.stdout
    assert "explorer.terminal -> cli" in r.stdout and "explorer.models -> PyQt6" in r.stdout
