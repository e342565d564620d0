"""Writing results to files: PNG pictures, NPY arrays, JSON reports, and pictures of any size from
strips of rows (kernels' `Renderer.strips`).

Every write is atomic: it goes to a temporary file in the target's folder, which replaces the
target only once complete. A failure or a cancellation part-way leaves an earlier file at the path
whole and no temporary file behind. `check_writable` answers, before any work starts, whether a
path can be written at all.
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat

import numpy as np

from kernels import buffers

FORMATS = (".png", ".npy")
# share of the memory the OS can hand out that one PNG picture may take while it is assembled
HOST_MEMORY_SHARE = 0.8


def check_writable(path) -> None:
    """Raise ValueError with a one-line reason when `path` cannot be written: its folder does not
    exist or is not writable, or it is a folder itself."""
    path = os.fspath(path)
    if not path:
        raise ValueError("the output file name is empty")
    if os.path.isdir(path):
        raise ValueError(f"cannot write {path}: it is a folder; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise ValueError(f"cannot write {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {path}: no permission to create files in {folder}")


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary file name beside `path`; on a clean exit it replaces `path`, on an
    exception it is removed and `path` stays as it was."""
    path = os.fspath(path)
    folder, name = os.path.split(os.path.abspath(path))
    while True:
        tmp = os.path.join(folder, f".{name}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o666 and O_EXCL like a plain open(): the umask applies, nothing is overwritten
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
            break
        except FileExistsError:
            continue
    os.close(fd)
    try:
        yield tmp
        with contextlib.suppress(FileNotFoundError):   # an overwritten file keeps its mode
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)   # the data is on disk before the name points at it
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_png(path, rgba: np.ndarray) -> None:
    """Write an (h, w, 4) uint8 RGBA picture, row 0 at the top."""
    rgba = np.asarray(rgba)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"a PNG needs (h, w, 4) uint8 RGBA, got {rgba.shape} {rgba.dtype}")
    try:
        from PIL import Image
    except ImportError as exc:
        raise RuntimeError("writing PNG files needs Pillow: pip install pillow") from exc
    with atomic_path(path) as tmp:
        Image.fromarray(np.ascontiguousarray(rgba), "RGBA").save(tmp, format="PNG")


def write_npy(path, values: np.ndarray) -> None:
    """Write an array as .npy in float64 (the raw values of a frame)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, values)


def write_json(path, obj) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=2)
        fh.write("\n")


def ensure_host_fits(nbytes: int, what: str) -> None:
    """ValueError before a large host allocation that the OS could not hand out now."""
    avail = buffers.host_available_bytes()
    if avail is not None and nbytes > HOST_MEMORY_SHARE * avail:
        raise ValueError(f"{what} needs {nbytes / 2**30:.1f} GiB of memory but only "
                         f"{avail / 2**30:.1f} GiB is free; choose a smaller size or export .npy")


def write_strips(path, width: int, height: int, strips, progress=None) -> None:
    """Write a width×height picture that arrives as strips (row0, array) top first: uint8 RGBA
    (n, width, 4) strips to a .png, float64 (n, width) strips to a .npy. A .npy is written strip by
    strip through a memory map (any size); a .png is assembled in memory first (checked against
    free host memory) since PNG encoders take a whole picture. progress(fraction) after each strip.
    The strips iterator is closed whatever happens, so a renderer frees its buffers."""
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    w, h = int(width), int(height)
    try:
        if ext not in FORMATS:
            raise ValueError(f"cannot write {path}: the file name must end in .png (picture) or "
                             ".npy (raw values)")
        if ext == ".png":
            ensure_host_fits(w * h * 4, f"a {w}×{h} PNG")
            picture = np.empty((h, w, 4), dtype=np.uint8)
            _fill(picture, strips, progress, path)
            write_png(path, picture)
        else:
            with atomic_path(path) as tmp:
                out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float64, shape=(h, w))
                try:
                    _fill(out, strips, progress, path)
                    out.flush()
                finally:
                    del out   # unmapped before the file is renamed or removed
    finally:
        close = getattr(strips, "close", None)
        if close is not None:
            close()


def _fill(out: np.ndarray, strips, progress, path) -> None:
    h = out.shape[0]
    done = 0
    for row0, strip in strips:
        n = strip.shape[0]
        if strip.shape[1:] != out.shape[1:] or strip.dtype != out.dtype or row0 != done:
            raise ValueError(f"{path}: expected a {out.dtype} strip of shape (n, "
                             f"{', '.join(map(str, out.shape[1:]))}) at row {done}, got "
                             f"{strip.dtype} {strip.shape} at row {row0}")
        out[row0:row0 + n] = strip
        done += n
        if progress is not None:
            progress(min(1.0, done / h))
    if done != h:
        raise ValueError(f"{path}: the strips covered {done} of {h} rows")
