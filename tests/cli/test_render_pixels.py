"""A `--render` PNG holds exactly the pixels of the frame the window draws for the same place
(issue 38: the one-shot command skips what only a window needs and writes its PNG faster; none of
that may change a pixel)."""
import io
import os
import subprocess
import sys

import numpy as np
import pytest

from cli.args import build_parser
from cli.location import apply_location
from kernels.backend import Backend
from kernels.mandelbrot.requests.number_type import resolve
from services.render import view_renderer
from services.requests import RENDER_VIEWS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLACES = {
    "float64": ["--center=-0.7435,0.1314", "--width", "0.002", "--iters", "400"],
    "deep": ["--location", os.path.join(ROOT, "resources", "kf-1e14.kfr")],
}


def window_frame(argv, backend):
    """The frame as the window's renderer draws it: warmed up fully, one render() call."""
    args = build_parser().parse_args(argv)
    w, h = args.size
    if args.location:
        assert apply_location(args, (w, h)) is None
    options, build_request = RENDER_VIEWS["mandelbrot"]
    request = build_request({k: getattr(args, k) for k in options}, w, h, False, notes=[])
    request, _ = resolve(request, backend, "auto")
    return view_renderer("mandelbrot", request, backend).render(request).rgba


def _compare(tmp_path, place, backend):
    from PIL import Image
    out = tmp_path / "x.png"
    argv = ["--render", "mandelbrot", "--backend", backend.name, "--size", "80x56"] + PLACES[place]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [ROOT, os.environ.get("PYTHONPATH")])))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "main.py")] + argv + ["--out", str(out)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    written = np.asarray(Image.open(out).convert("RGBA"))
    expected = window_frame(argv + ["--out", str(out)], backend)
    assert written.shape == expected.shape
    assert np.array_equal(written, expected), f"{(written != expected).any(-1).sum()} pixels differ"


@pytest.mark.parametrize("place", sorted(PLACES))
def test_the_command_writes_the_window_s_pixels(tmp_path, place):
    _compare(tmp_path, place, Backend("cpu"))


@pytest.mark.gpu
@pytest.mark.parametrize("place", sorted(PLACES))
def test_on_the_gpu_too(tmp_path, place):
    """The command's GPU start differs most (its context opened ahead, events for CUPTI)."""
    from kernels.backend import cuda_status
    status = cuda_status()
    if not status.usable or status.simulated:
        pytest.skip(f"needs a real GPU: {status.reason or 'the simulator is too slow'}")
    _compare(tmp_path, place, Backend("cuda", device=status.device))


def _picture(h, w, seed=3):
    """Runs of one colour with rows of noise between: both the encoder's cases."""
    rng = np.random.default_rng(seed)
    rgba = np.repeat(rng.integers(0, 256, (h, 1, 4), dtype=np.uint8), w, axis=1)
    rgba[::7] = rng.integers(0, 256, rgba[::7].shape, dtype=np.uint8)
    return rgba


@pytest.mark.parametrize("h, w, threads", [(61, 77, None), (1, 1, None), (1, 900, 3),
                                            (300, 211, 1), (300, 211, 4), (257, 130, 64)])
def test_the_fast_png_decodes_to_the_same_pixels(tmp_path, monkeypatch, h, w, threads):
    """services/png_encode.py, in slices of ~1000 bytes so that small pictures are cut too."""
    from PIL import Image

    from services import png_encode
    from services.files import write_png
    monkeypatch.setattr(png_encode, "SLICE_MIN", 1000)
    rgba = _picture(h, w)
    fast = png_encode.encode_png(rgba, threads=threads)
    got = Image.open(io.BytesIO(fast))
    got.load()                  # Pillow checks each chunk's CRC as it reads
    assert got.mode == "RGBA" and np.array_equal(np.asarray(got), rgba)
    write_png(tmp_path / "fast.png", rgba)
    write_png(tmp_path / "six.png", rgba, compress_level=6)
    for name in ("fast.png", "six.png"):
        assert np.array_equal(np.asarray(Image.open(tmp_path / name)), rgba), name


def test_the_checksum_of_pieces_joined():
    from services.png_encode import adler32_combine
    import zlib
    rng = np.random.default_rng(5)
    data = rng.integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    for cut in (0, 1, 65521, 65522, 131_042, 199_999, 200_000):
        a, b = data[:cut], data[cut:]
        assert adler32_combine(zlib.adler32(a), zlib.adler32(b), len(b)) == zlib.adler32(data)
