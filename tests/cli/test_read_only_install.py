"""A read-only install run by a user with no writable home (a service account, a container, a
shared lab machine): numba has no folder for its kernel cache, and refuses to define a cached kernel
then. main.py must decide before any module with kernels is imported, in every mode (issue 40:
--newton imported the deep-zoom kernels first, and --render and --movie ended in a traceback)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NEWTON_PLACE = ["--newton", "--center", "-1.7548,0", "--width", "0.001"]   # period 3's minibrot
DEEP_PLACE = ["--center", "-0.743643887037151,0.131825904205330", "--width", "1e-20"]

# main.main with the cache check replaced by a spy: it lists the project's modules that define
# cached kernels (a jit with cache=True in their source) imported before it, then ends the process
SPY = r"""
import json, os, re, sys
ROOT = sys.argv[1]
for name in sys.argv[2].split(",") if sys.argv[2] else ():
    __import__(name)

def cached_kernel_modules():
    found = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(ROOT + os.sep) and path.endswith(".py"):
            with open(path, encoding="utf-8") as f:
                if re.search(r"(jit|vectorize|cfunc)\([^)]*cache\s*=\s*True", f.read()):
                    found.append(name)
    return sorted(found)

def spy():
    print("before the cache check:", json.dumps(cached_kernel_modules()), flush=True)
    os._exit(0)

import cli.environment
cli.environment.ensure_numba_cache = spy
import main
sys.exit(main.main(sys.argv[3:]))
"""

SMALL = ["--size", "64x48"]
MODES = {
    "window": [],
    "render float64": ["--render", "mandelbrot", *SMALL, "--out", "{out}/x.png"],
    "render deep": ["--render", "mandelbrot", *DEEP_PLACE, *SMALL, "--out", "{out}/x.png"],
    "render --newton": ["--render", "mandelbrot", *NEWTON_PLACE, *SMALL, "--out", "{out}/x.png"],
    "render distance": ["--render", "distance", *SMALL, "--out", "{out}/x.png"],
    "movie --newton": ["--movie", "{out}/x.mp4", *NEWTON_PLACE, *SMALL, "--seconds", "1"],
    "bench": ["--bench", "--only", "mandelbrot"],
    "bench --ui": ["--bench", "--ui", *SMALL],
}


def _modules_before_the_check(argv, tmp_path, imported_first=()):
    argv = [a.format(out=tmp_path) for a in argv] + ["--backend", "cpu"]
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, "-c", SPY, ROOT, ",".join(imported_first), *argv],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("before the cache check:")]
    assert lines, f"the cache check never ran (exit {r.returncode}): {r.stderr[-2000:]}"
    return json.loads(lines[0].split(":", 1)[1])


@pytest.mark.parametrize("mode", MODES)
def test_no_module_with_cached_kernels_is_imported_before_the_cache_check(mode, tmp_path):
    assert _modules_before_the_check(MODES[mode], tmp_path) == []


def test_the_check_above_sees_a_module_with_cached_kernels(tmp_path):
    """The spy is no empty promise: a kernel module imported ahead is named."""
    ahead = _modules_before_the_check(MODES["render float64"], tmp_path,
                                      imported_first=["kernels.mandelbrot.loops.escape"])
    assert "kernels.mandelbrot.loops.escape" in ahead


# ---- as a user who can write nowhere ---------------------------------------------------------
NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
NOTE = "the kernels are compiled in memory only, so every start compiles them again"


def _nobody_env():
    """No writable home, no cache folder named: only what a bare service account has."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
            "LANG": "C.UTF-8", "QT_QPA_PLATFORM": "offscreen"}


def _as_nobody(args, timeout=300):
    return subprocess.run(AS_NOBODY + [sys.executable, *args], cwd=ROOT, env=_nobody_env(),
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def nobody_out():
    """A folder the unprivileged user may write its pictures to (and nothing else), or a skip that
    says why this machine cannot run the test."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to run a command as an unprivileged user")
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv (util-linux) to run a command as an unprivileged user")
    probe = _as_nobody(["-c", "import numba, main; import kernels.numba_cache"], timeout=60)
    if probe.returncode != 0:
        pytest.skip("the unprivileged user cannot run this checkout's Python here: "
                    + (probe.stderr.strip().splitlines() or ["?"])[-1])
    writable = _as_nobody(["-c", "import os, sys; print(os.access(sys.argv[1], os.W_OK))", ROOT],
                          timeout=60)
    if writable.stdout.strip() != "False":
        pytest.skip("the unprivileged user may write into this checkout: not a read-only install")
    folder = tempfile.mkdtemp(prefix="read-only-install-")
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _ran_in_memory(r):
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    notes = [ln for ln in r.stderr.splitlines() if NOTE in ln]
    assert len(notes) == 1 and notes[0].startswith("main.py: note: "), r.stderr[-3000:]
    assert "first time only" not in r.stdout + r.stderr         # it compiles at every start


@pytest.mark.parametrize("place", [[], NEWTON_PLACE], ids=["float64", "newton"])
def test_render_as_a_user_who_can_write_nowhere(nobody_out, place):
    out = os.path.join(nobody_out, f"render-{len(place)}.png")
    r = _as_nobody(["main.py", "--render", "mandelbrot", *place, *SMALL, "--backend", "cpu",
                    "--out", out])
    _ran_in_memory(r)
    assert "Compiling the kernels, again at every start: no disk cache here" in r.stdout, r.stdout
    with open(out, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_movie_as_a_user_who_can_write_nowhere(nobody_out):
    pytest.importorskip("av", reason="the movie is encoded by PyAV")
    out = os.path.join(nobody_out, "zoom.mp4")
    r = _as_nobody(["main.py", "--movie", out, *NEWTON_PLACE, *SMALL, "--seconds", "1", "--fps",
                    "10", "--backend", "cpu"])
    _ran_in_memory(r)
    assert re.search(r"wrote .*zoom\.mp4 \(10 frames", r.stdout), r.stdout
    assert os.path.getsize(out) > 0


def test_a_compile_under_way_says_it_comes_again_at_every_start(monkeypatch):
    from kernels.mandelbrot.frames import warm
    from kernels.numba_cache import ENV, MEMORY
    monkeypatch.delenv(ENV, raising=False)
    assert warm.waiting_words(("float64",)) == "compiling the kernels, first time only"
    monkeypatch.setenv(ENV, MEMORY)
    assert warm.waiting_words(("table", "perturbation")) == \
        "compiling the deep-zoom kernels, again at every start: no disk cache here"
