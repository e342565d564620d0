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
from kernels.extras import install_hint

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


def check_export_path(path) -> None:
    """check_writable, and a name ending in .png or .npy (what write_strips can write)."""
    check_writable(path)
    ext = os.path.splitext(os.fspath(path))[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"cannot write {os.fspath(path)}: the file name must end in .png (picture) "
                         "or .npy (raw values)")


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


def write_png(path, rgba: np.ndarray, compress_level: int = 6) -> None:
    """Write an (h, w, 4) uint8 RGBA picture, row 0 at the top. `compress_level` 0–9 (zlib's;
    Pillow encodes on one thread, and level 1 is several times faster than 6 on a poster)."""
    rgba = np.asarray(rgba)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"a PNG needs (h, w, 4) uint8 RGBA, got {rgba.shape} {rgba.dtype}")
    try:
        from PIL import Image
    except ImportError as exc:
        raise RuntimeError(f"writing PNG files needs Pillow: {install_hint()}") from exc
    with atomic_path(path) as tmp:
        Image.fromarray(np.ascontiguousarray(rgba), "RGBA").save(tmp, format="PNG",
                                                                 compress_level=int(compress_level))


def write_npy(path, values: np.ndarray) -> None:
    """Write an array as .npy in float64 (the raw values of a frame)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, values)


def write_json(path, obj, indent: int = 2) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
        json.dump(obj, fh, indent=indent)
        fh.write("\n")


def write_text(path, text: str, newline: str | None = None) -> None:
    """Write text (a CSV table, a note) atomically, UTF-8; `newline` as for open()."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline=newline) as fh:
        fh.write(text)


def human_bytes(n: int) -> str:
    """1536 -> '1.5 KiB', 3.4 GiB as '3.4 GiB'."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


def ensure_host_fits(nbytes: int, what: str) -> None:
    """ValueError before a large host allocation that the OS could not hand out now."""
    avail = buffers.host_available_bytes()
    if avail is not None and nbytes > HOST_MEMORY_SHARE * avail:
        raise ValueError(f"{what} needs {nbytes / 2**30:.1f} GiB of memory but only "
                         f"{avail / 2**30:.1f} GiB is free; choose a smaller size or export .npy")


def write_strips(path, width: int, height: int, strips, progress=None) -> None:
    """Write a width×height picture that arrives as strips (row0, array) top first: uint8 RGBA
    (n, width, 4) strips to a .png, float64 (n, width) strips to a .npy (see StripWriter).
    progress(fraction) after each strip. The strips iterator is closed whatever happens, so a
    renderer frees its buffers."""
    try:
        with StripWriter(path, width, height) as writer:
            for row0, strip in strips:
                fraction = writer.add(row0, strip)
                if progress is not None:
                    progress(fraction)
    finally:
        close = getattr(strips, "close", None)
        if close is not None:
            close()


class StripWriter:
    """A picture written strip by strip, as the strips arrive, so that its caller may do other
    work between two strips (the window's export job yields there and the view keeps rendering).

    A .npy goes strip by strip into a memory-mapped temporary file (any size); a .png is assembled
    in memory first (checked against free host memory when the writer is made) since PNG encoders
    take a whole picture. `add(row0, strip)` each strip, top first; `finish()` puts the file in
    place; `abort()`, or an exception inside `with StripWriter(...)`, leaves an earlier file at the
    path whole and no temporary file behind.
    """

    def __init__(self, path, width: int, height: int):
        self.path = os.fspath(path)
        ext = os.path.splitext(self.path)[1].lower()
        self.width, self.height = w, h = int(width), int(height)
        if ext not in FORMATS:
            raise ValueError(f"cannot write {self.path}: the file name must end in .png (picture) "
                             "or .npy (raw values)")
        self.done = 0
        self._stack = contextlib.ExitStack()
        self._closed = False
        if ext == ".png":
            ensure_host_fits(w * h * 4, f"a {w}×{h} PNG")
            self._out = np.empty((h, w, 4), dtype=np.uint8)
            self._png = True
        else:
            self._png = False
            # the temporary file is made with the first strip, not here: the first strip may
            # take a JIT compile that a Ctrl+C cannot cut short, and no file may linger meanwhile
            self._out = None
        self._shape = (h, w, 4) if self._png else (h, w)
        self._dtype = np.dtype(np.uint8 if self._png else np.float64)

    def _open(self):
        try:
            tmp = self._stack.enter_context(atomic_path(self.path))
            self._out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float64,
                                                  shape=self._shape)
        except BaseException as exc:
            self._stack.__exit__(type(exc), exc, exc.__traceback__)
            self._closed = True
            raise

    def add(self, row0: int, strip: np.ndarray) -> float:
        """Copy one strip in place; returns the fraction of the rows written so far."""
        n = strip.shape[0]
        if strip.shape[1:] != self._shape[1:] or strip.dtype != self._dtype or row0 != self.done:
            raise ValueError(f"{self.path}: expected a {self._dtype} strip of shape (n, "
                             f"{', '.join(map(str, self._shape[1:]))}) at row {self.done}, got "
                             f"{strip.dtype} {strip.shape} at row {row0}")
        if self.done + n > self.height:
            raise ValueError(f"{self.path}: the strips run past the picture's {self.height} rows")
        if self._out is None:
            self._open()
        self._out[row0:row0 + n] = strip
        self.done += n
        return min(1.0, self.done / self.height)

    def finish(self) -> None:
        if self._closed:
            return
        if self.done != self.height:
            exc = ValueError(f"{self.path}: the strips covered {self.done} of {self.height} rows")
            self.abort(exc)
            raise exc
        self._closed = True
        if self._png:
            write_png(self.path, self._out)
            self._out = None
        else:
            self._out.flush()
            self._out = None      # unmapped before the file is renamed
            self._stack.close()

    def abort(self, exc: BaseException | None = None) -> None:
        if self._closed:
            return
        self._closed = True
        self._out = None          # unmapped before the file is removed
        exc = exc or RuntimeError("the picture was abandoned")
        self._stack.__exit__(type(exc), exc, exc.__traceback__)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        else:
            self.abort(exc)
        return False
