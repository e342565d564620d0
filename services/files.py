"""Writing results to files: PNG pictures, NPY arrays, JSON reports, and pictures of any size from
strips of rows (kernels' `Renderer.strips`).

Every file the app writes goes through `atomic_path` (or a writer built on it): a temporary file in
the target's folder, which replaces the target only once complete. A failure or a cancellation
part-way leaves an earlier file at the path whole and no temporary file behind. A path that is a
symbolic link is written through to its target (the link stays a link); a device, pipe or socket
is refused, never replaced. `check_writable` answers, before any work starts, whether a path can be
written at all; a .npy is written without a memory map, after a check that the disk holds it, so a
full disk is an OSError with a message, never a SIGBUS.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import stat

import numpy as np

from kernels import buffers
from kernels.extras import install_hint

FORMATS = (".png", ".npy")
# share of the memory the OS can hand out that one PNG picture may take while it is assembled
HOST_MEMORY_SHARE = 0.8


NOT_A_FILE = "it is not a regular file (a device, a pipe or a socket); give a file name"


def target_of(path) -> str:
    """The file a write to `path` replaces: a symbolic link's final target (so that the link stays
    a link), else `path` itself as an absolute path. OSError (EINVAL) when something other than a
    regular file is there: a device such as /dev/full is never replaced by a file."""
    path = os.fspath(path)
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode
    except OSError:         # nothing there yet (or a loop of links: the write will say so)
        return real
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "it is a folder; give a file name", path)
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, NOT_A_FILE, path)
    return real


def check_writable(path) -> None:
    """Raise ValueError with a one-line reason when `path` cannot be written: its folder does not
    exist or is not writable, it is a folder itself, or it is not a regular file (a device, a
    pipe). A symbolic link is judged by its target."""
    path = os.fspath(path)
    if not path:
        raise ValueError("the output file name is empty")
    if os.path.isdir(path):
        raise ValueError(f"cannot write {path}: it is a folder; give a file name")
    try:
        real = target_of(path)
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror}") from None
    folder = os.path.dirname(real)
    if not os.path.isdir(folder):
        raise ValueError(f"cannot write {path}: the folder {folder} does not exist")
    name, limit = os.path.basename(real), name_max(folder)
    if len(os.fsencode(name)) > limit:
        raise ValueError(f"cannot write {path}: the file name is too long ("
                         f"{len(os.fsencode(name)):,} bytes; this file system takes at most "
                         f"{limit}); choose a shorter name")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write {path}: no permission to create files in {folder}")


def check_names_beside(out, patterns) -> None:
    """ValueError when a name kept beside `out` while it is made (a parts folder, a lock: each
    pattern is such a name with {} for out's file name) is longer than the file system takes."""
    out = os.fspath(out)
    name = os.path.basename(out)
    limit = name_max(os.path.dirname(os.path.abspath(out)))
    longest = max(len(os.fsencode(p.format(name))) for p in patterns)
    if longest > limit:
        extra = longest - len(os.fsencode(name))
        raise ValueError(f"{out}: the name is too long: "
                         f"{', '.join(p.format('NAME') for p in patterns)} is kept beside it while "
                         f"it is made, and this file system takes names of up to {limit} bytes; "
                         f"choose a name of at most {limit - extra} bytes")


def check_export_path(path) -> str:
    """The path to write, `~` expanded (a quoted or `--out=~/…` name reaches the app unexpanded),
    after check_writable and a name ending in .png or .npy (what write_strips can write)."""
    path = os.path.expanduser(os.fspath(path))
    check_writable(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise ValueError(f"cannot write {path}: the file name must end in .png (picture) "
                         "or .npy (raw values)")
    return path


def name_max(folder) -> int:
    """The longest file name, in bytes, that the file system holding `folder` takes."""
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):      # no pathconf (Windows): the usual limit
        return 255


def temporary_name(name: str, limit: int) -> str:
    """`.NAME.xxxxxxxx.tmp` beside a file called `name`, NAME cut short when the whole would be
    longer than `limit` bytes: a name near the limit can still be written through it."""
    tail = f".{secrets.token_hex(4)}.tmp"
    room = limit - 1 - len(tail)
    encoded = os.fsencode(name)
    if len(encoded) > room:     # cut on a whole character (a cut one would be dropped anyway)
        name = encoded[:room].decode("utf-8", errors="ignore")
    return f".{name}{tail}"


@contextlib.contextmanager
def atomic_path(path, folder: str | None = None):
    """Yield a temporary file name beside `path`; on a clean exit it replaces `path`, on an
    exception it is removed and `path` stays as it was. A link is written through to its target
    (the temporary file lies beside the target); what is not a regular file is refused (OSError)
    before anything is written. `folder`: where the temporary file lies instead (one on the
    target's file system, e.g. a parts folder that is removed with whatever a killed run left)."""
    path = target_of(path)
    beside, name = os.path.split(os.path.abspath(path))
    folder = folder or beside
    limit = name_max(folder)
    while True:
        tmp = os.path.join(folder, temporary_name(name, limit))
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


def write_png(path, rgba: np.ndarray, compress_level: int | None = None) -> None:
    """Write an (h, w, 4) uint8 RGBA picture, row 0 at the top. `compress_level` 0–9 (zlib's, by
    Pillow on one thread: level 1 is several times faster than 6 on a poster), or None: run-length
    deflate on every core (services/png_encode.py), what a picture of one frame is written with."""
    rgba = np.asarray(rgba)
    if rgba.ndim != 3 or rgba.shape[2] != 4 or rgba.dtype != np.uint8:
        raise ValueError(f"a PNG needs (h, w, 4) uint8 RGBA, got {rgba.shape} {rgba.dtype}")
    if compress_level is None:
        from .png_encode import write_png_to
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            write_png_to(fh, rgba)
        return
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
    check_room(path, npy_bytes(values.shape))
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, values)


def write_json(path, obj, indent: int = 2) -> None:
    write_text(path, json.dumps(obj, indent=indent) + "\n")


def write_text(path, text: str, newline: str | None = None) -> None:
    """Write text (a CSV table, a note, a .kfr location) atomically, UTF-8; `newline` as for
    open()."""
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline=newline) as fh:
        fh.write(text)


def write_bytes(path, data: bytes) -> None:
    """Write bytes atomically."""
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)


def move_into_place(src, path) -> None:
    """Put the finished file `src` at `path` (through a link to its target; a device refused):
    renamed where both lie on one file system, else copied atomically and `src` removed."""
    real = target_of(path)
    try:
        os.replace(src, real)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        with atomic_path(real) as tmp:
            shutil.copyfile(src, tmp)
        os.remove(src)


def free_bytes(folder) -> int | None:
    """Free space on the disk holding `folder` (None where it cannot be told)."""
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def npy_bytes(shape, dtype=np.float64) -> int:
    """The exact size of a .npy file of this shape (format 1.0's header, as written here)."""
    header = len(_npy_header(shape, dtype))
    return header + int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


def _npy_header(shape, dtype=np.float64) -> bytes:
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(
        np.dtype(dtype)), "fortran_order": False, "shape": tuple(int(n) for n in shape)})
    return buf.getvalue()


def check_room(path, nbytes: int) -> None:
    """OSError (ENOSPC) in plain words when the disk that will hold `path` has less than
    `nbytes` free (an earlier file at the path counts as free: it is replaced)."""
    real = target_of(path)
    free = free_bytes(os.path.dirname(real))
    if free is None:
        return
    with contextlib.suppress(OSError):
        free += os.stat(real).st_size
    if nbytes > free:
        raise OSError(errno.ENOSPC, f"{os.fspath(path)} needs {human_bytes(nbytes)} but the disk "
                      f"has {human_bytes(free)} free; free some space or choose another folder")


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

    A .npy goes strip by strip into a temporary file (any size; plain writes, no memory map, so a
    disk that fills meanwhile is an OSError, and its room is checked before the first strip); a .png is assembled
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
            check_room(self.path, npy_bytes(self._shape))
            tmp = self._stack.enter_context(atomic_path(self.path))
            self._out = self._stack.enter_context(open(tmp, "wb"))
            self._out.write(_npy_header(self._shape))
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
        if self._png:
            self._out[row0:row0 + n] = strip
        else:
            self._out.write(np.ascontiguousarray(strip).data)
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
            self._out = None      # closed (by the stack) before the file is renamed
            self._stack.close()

    def abort(self, exc: BaseException | None = None) -> None:
        if self._closed:
            return
        self._closed = True
        self._out = None          # the file is closed (by the stack) before it is removed
        exc = exc or RuntimeError("the picture was abandoned")
        # closing a file the disk could not take fails again: the temporary file goes all the same
        # and the first failure is the one the caller reports
        with contextlib.suppress(OSError):
            self._stack.__exit__(type(exc), exc, exc.__traceback__)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        else:
            self.abort(exc)
        return False
