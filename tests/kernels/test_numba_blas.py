"""numba's BLAS probe answered without importing scipy.linalg (kernels/numba_blas.py): a stand-in
scipy whose linalg records its import shows whether numba's CPU target still loads it."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fake_scipy(folder):
    pkg = folder / "scipy"
    (pkg / "linalg").mkdir(parents=True)
    (pkg / "__init__.py").write_text("__version__ = '1.17.0'\n")
    (pkg / "linalg" / "__init__.py").write_text(
        "import os\nopen(os.environ['LINALG_MARK'], 'w').close()\n")
    (pkg / "linalg" / "cython_blas.py").write_text("")


def _run(code, tmp_path):
    _fake_scipy(tmp_path / "site")
    mark = tmp_path / "linalg-imported"
    env = dict(os.environ, LINALG_MARK=str(mark), PYTHONPATH=os.pathsep.join(
        [str(tmp_path / "site"), ROOT] + list(filter(None, [os.environ.get("PYTHONPATH")]))))
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.split(), mark.exists()


def test_a_cpu_kernel_loads_without_scipy_linalg(tmp_path):
    code = """
import sys
import kernels
import numba
import numpy as np
f = numba.njit(lambda a: a.sum())
assert f(np.ones(3)) == 3.0
print('scipy.linalg' in sys.modules, sys.modules['numba.np.arraymath']._HAVE_BLAS)
"""
    printed, imported = _run(code, tmp_path)
    assert printed == ["False", "False"] and not imported


def test_without_the_skip_numba_imports_it(tmp_path):
    """The stand-in is what numba loads when left alone (so the test above can fail)."""
    code = """
import sys
import numba
import numpy as np
f = numba.njit(lambda a: a.sum())
assert f(np.ones(3)) == 3.0
print('scipy.linalg' in sys.modules)
"""
    printed, imported = _run(code, tmp_path)
    assert printed == ["True"] and imported


def test_numba_cudas_probe_is_skipped_too(tmp_path, numba_cuda):
    code = """
import importlib, sys
import kernels
from numba import cuda
m = importlib.import_module('numba.cuda.np.arraymath')     # its target's first load imports it
print('scipy.linalg' in sys.modules, m._HAVE_BLAS)
"""
    printed, imported = _run(code, tmp_path)
    assert printed == ["False", "False"] and not imported


def test_skipping_twice_or_late_does_nothing():
    from kernels import numba_blas
    import numba.np.arraymath  # noqa: F401  (loaded: the probe has run)
    assert numba_blas.skip_blas_probe() is False
