"""How to install what is missing, worded for how this copy of the app was installed.

A checkout (run from the clone, or an editable install of it) is extended from its folder with
`.venv/bin/pip install -e '.[movie]'`; an installed wheel with `pip install 'gpu-explorer[movie]'`.
Every install hint the app prints (kernels, services, the command line and the window) comes from
`install_hint`, so they never disagree. Qt-free and import-light: anything may call it.
"""
from __future__ import annotations

import functools
import json
import os
import sys

DIST = "gpu-explorer"
# the folder that holds kernels/, cli/, main.py and, in a checkout, pyproject.toml
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=1)
def checkout_root() -> str | None:
    """The checkout this copy runs from, or None for an installed wheel: pyproject.toml beside
    the packages (run from the clone), or pip's record of an editable install."""
    if os.path.isfile(os.path.join(ROOT, "pyproject.toml")):
        return ROOT
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        text = distribution(DIST).read_text("direct_url.json")
    except (ImportError, PackageNotFoundError, OSError):
        return None
    try:
        info = json.loads(text or "{}")
    except ValueError:
        return None
    if info.get("dir_info", {}).get("editable") and str(info.get("url", "")).startswith("file://"):
        return info["url"][len("file://"):]
    return None


def _venv_pip(root: str) -> str:
    """The pip to name for a checkout: the README's `.venv/bin/pip` when the app runs from the
    checkout's .venv (or from no venv at all), else the pip of the venv it runs from."""
    scripts = "Scripts" if os.name == "nt" else "bin"
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    if in_venv and os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(root, ".venv")):
        return os.path.join(sys.prefix, scripts, "pip")
    return os.path.join(".venv", scripts, "pip")


def install_hint(extra: str | None = None, *, root: str | None = None,
                 checkout: bool | None = None) -> str:
    """The command that installs `extra` (None: the app's own dependencies, for a base one that
    went missing), e.g. ".venv/bin/pip install -e '.[movie]'" in a checkout, "pip install
    'gpu-explorer[movie]'" for a wheel. `root`/`checkout` override the detection (tests)."""
    if checkout is None:
        root = root or checkout_root()
        checkout = root is not None
    if checkout:
        target = f"'.[{extra}]'" if extra else "."
        command = f"{_venv_pip(root or ROOT)} install -e {target}"
        here = os.path.realpath(os.getcwd()) == os.path.realpath(root or ROOT)
        return command if here or root is None else f"{command} (in {root})"
    return f"pip install '{DIST}[{extra}]'" if extra else f"pip install {DIST}"


def app_version() -> str:
    """This copy's version: the installed distribution's, or pyproject.toml's in a checkout that
    was never installed; "unknown" when neither says."""
    try:
        from importlib.metadata import PackageNotFoundError, version
        return version(DIST)
    except (ImportError, PackageNotFoundError):
        pass
    import re
    try:
        with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as fh:
            m = re.search(r'^version\s*=\s*"([^"]+)"', fh.read(), re.MULTILINE)
    except OSError:
        m = None
    return m.group(1) if m else "unknown"
