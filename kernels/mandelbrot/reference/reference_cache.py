"""A bounded on-disk cache of reference orbits, so that reopening a deep location is instant.

One file per orbit in the user's cache folder (`cache_folder()`: $GPU_EXPLORER_CACHE_DIR, else
the platform's convention: $XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS,
%LOCALAPPDATA% on Windows; then gpu-explorer/references). A file is named by a hash of the centre
and the precision, and holds:

    MAGIC (8 bytes) | header length (4 bytes, little-endian) | header (JSON) | payload | SHA-256

The header names the format version, the centre strings, precision, iterations, the orbit's
length, its last point and the payload's size; the payload is the orbit's float64 points and
the exact form of its tiny points (orbit_snapshot.py); the SHA-256 (32 bytes) is of everything
before it, header included. A file is trusted only when the magic, the version, the header's
fields (each of its type and range), the sizes, the checksum, the snapshot's own consistency
check and the centre all agree. It is read a part at a time, each checked before the next is
read: the magic and header first, then the file's size against what the header announces, so
a huge file or a named pipe under an entry's name is refused without reading it. Anything else
(corrupt, truncated, foreign, another version, not a regular file) is ignored with a note in
`notes` and the log, and never read again this run. The folder is held to `max_bytes`: after
each save the least recently used files go (a load touches its file).
"""
from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import stat
import tempfile
import threading

import numpy as np

from ...user_cache import ENV_FOLDER, platform_cache_folder
from .orbit_snapshot import OrbitSnapshot

MAGIC = b"GXREFORB"
# 2: the checksum covers the header too (version 1's covered the payload alone)
VERSION = 2
SUFFIX = ".ref"
DEFAULT_MAX_BYTES = 1 << 30
# the header holds two centres of up to 20,000 characters and the last point in hex
MAX_HEADER_BYTES = 1 << 20
_START = len(MAGIC) + 4
_DIGEST = hashlib.sha256().digest_size
# bounds of the header's counts: far past any orbit the app makes, short of any overflow
MAX_PRECISION = 1 << 24
MAX_COUNT = 1 << 48

log = logging.getLogger(__name__)


def cache_folder(environ=None, platform: str | None = None) -> str:
    """The folder of the reference cache (not created here)."""
    env = os.environ if environ is None else environ
    if env.get(ENV_FOLDER):
        return os.path.join(env[ENV_FOLDER], "references")
    return os.path.join(platform_cache_folder(env, platform), "references")


def centre_key(centre_re: str, centre_im: str) -> str:
    text = f"{str(centre_re).strip()},{str(centre_im).strip()}".encode()
    return hashlib.sha256(text).hexdigest()[:32]


def _payload(s: OrbitSnapshot) -> bytes:
    return b"".join(np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).tobytes()
                    for a in (s.z, s.tiny_n, s.tiny_m, s.tiny_e))


def encode(s: OrbitSnapshot) -> bytes:
    """A snapshot as the bytes of a cache file."""
    payload = _payload(s)
    header = {"version": VERSION, "centre_re": s.centre_re, "centre_im": s.centre_im,
              "precision": int(s.precision), "iterations": int(s.iterations),
              "escaped": bool(s.escaped), "period": s.period, "length": int(s.length),
              "tiny": int(s.tiny_n.shape[0]), "last_re": s.last_re, "last_im": s.last_im,
              "deriv": [float(s.deriv[0]), float(s.deriv[1]), int(s.deriv[2])],
              "payload_bytes": len(payload)}
    head = json.dumps(header, separators=(",", ":")).encode()
    body = MAGIC + len(head).to_bytes(4, "little") + head + payload
    return body + hashlib.sha256(body).digest()


class BadFile(ValueError):
    """A cache file that is not to be trusted (the message says why)."""


def decode(data: bytes) -> OrbitSnapshot:
    """The snapshot in a cache file's bytes; BadFile saying what is wrong."""
    return read_snapshot(io.BytesIO(data), len(data))


def read_snapshot(fh, size: int) -> OrbitSnapshot:
    """The snapshot in the open cache file `fh` of `size` bytes, read a part at a time (the
    magic, the header, then the rest once the size is the header's); BadFile saying what is
    wrong."""
    start = fh.read(_START)
    if start[:len(MAGIC)] != MAGIC:
        raise BadFile("not a reference cache file (wrong magic)")
    if len(start) < _START:
        raise BadFile("truncated (no header)")
    n = int.from_bytes(start[len(MAGIC):], "little")
    if n > MAX_HEADER_BYTES or _START + n + _DIGEST > size:
        raise BadFile(f"truncated or damaged header ({n:,} bytes announced)")
    head = fh.read(n)
    h = _header(head)
    expected = _START + n + h["payload_bytes"] + _DIGEST
    if size != expected:
        raise BadFile(f"{size:,} bytes, expected {expected:,} (truncated or damaged)")
    payload = fh.read(h["payload_bytes"])
    digest = fh.read(_DIGEST)
    if hashlib.sha256(start + head + payload).digest() != digest:
        raise BadFile("checksum mismatch (damaged)")
    return _snapshot(h, payload)


def _shown(v) -> str:
    """A header value for a message: a number or short text as it is, anything else by type."""
    if isinstance(v, (int, float)) or (isinstance(v, str) and len(v) <= 40):
        return repr(v)
    return f"a {type(v).__name__}"


def _header(raw: bytes) -> dict:
    """The header's fields, each checked for its type and range before anything uses it (a
    number such as 1e999 or a nesting 200,000 deep is a BadFile, not an overflow later)."""
    try:
        h = json.loads(raw.decode())
    except (ValueError, RecursionError) as exc:     # UnicodeDecodeError is a ValueError
        raise BadFile(f"unreadable header ({str(exc)[:80]})") from None
    if not isinstance(h, dict):
        raise BadFile(f"unreadable header ({_shown(h)}, not an object)")
    if h.get("version") != VERSION:
        raise BadFile(f"format version {_shown(h.get('version'))}, this app reads {VERSION}")
    counts = {"precision": MAX_PRECISION, "iterations": MAX_COUNT, "length": MAX_COUNT,
              "tiny": MAX_COUNT, "payload_bytes": MAX_COUNT}
    for key, top in counts.items():
        v = h.get(key)
        if type(v) is not int or not 0 <= v <= top:
            raise BadFile(f"damaged header ({key} is {_shown(v)})")
    period = h.get("period")
    if period is not None and (type(period) is not int or not 0 <= period <= MAX_COUNT):
        raise BadFile(f"damaged header (period is {_shown(period)})")
    for key in ("centre_re", "centre_im", "last_re", "last_im"):
        if not isinstance(h.get(key), str):
            raise BadFile(f"damaged header ({key} is {_shown(h.get(key))})")
    d = h.get("deriv")
    if not (isinstance(d, list) and len(d) == 3 and all(type(x) in (int, float) for x in d[:2])
            and type(d[2]) is int and abs(d[2]) <= MAX_COUNT):
        raise BadFile("damaged header (deriv)")
    if not isinstance(h.get("escaped"), bool):
        raise BadFile(f"damaged header (escaped is {_shown(h.get('escaped'))})")
    if h["payload_bytes"] != 16 * h["length"] + 28 * h["tiny"]:
        raise BadFile(f"damaged header (payload of {h['payload_bytes']:,} bytes for "
                      f"{h['length']:,} points)")
    return h


def _snapshot(h: dict, payload: bytes) -> OrbitSnapshot:
    """The snapshot of a checked header and its payload; BadFile when they do not fit."""
    length, k = h["length"], h["tiny"]
    sizes = (16 * length, 8 * k, 16 * k, 4 * k)
    try:
        parts, at = [], 0
        for size, dt in zip(sizes, ("<c16", "<i8", "<f8", "<i4")):
            parts.append(np.frombuffer(payload, dtype=dt, count=size // np.dtype(dt).itemsize,
                                       offset=at).astype(dt[1:]))
            at += size
        s = OrbitSnapshot(
            centre_re=h["centre_re"], centre_im=h["centre_im"], precision=h["precision"],
            iterations=h["iterations"], escaped=h["escaped"], period=h["period"],
            length=length, z=parts[0], tiny_n=parts[1], tiny_m=parts[2].reshape(k, 2),
            tiny_e=parts[3], last_re=h["last_re"], last_im=h["last_im"],
            deriv=(float(h["deriv"][0]), float(h["deriv"][1]), h["deriv"][2]))
        return s.check()
    except (ValueError, ArithmeticError) as exc:
        raise BadFile(f"damaged header or orbit ({exc})") from None


class ReferenceCache:
    """Reference orbits on disk, at most `max_bytes` of them (`folder`: default cache_folder())."""

    def __init__(self, folder: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES):
        self.folder = folder or cache_folder()
        self.max_bytes = int(max_bytes)
        self.notes: list[str] = []
        self._bad: set[str] = set()
        self._lock = threading.Lock()

    def _note(self, text: str) -> None:
        self.notes.append(text)
        log.warning("reference cache: %s", text)

    def _files(self, key: str | None = None) -> list[str]:
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        return [os.path.join(self.folder, f) for f in names
                if f.endswith(SUFFIX) and (key is None or f.startswith(key + "-"))]

    def path_for(self, s: OrbitSnapshot) -> str:
        return os.path.join(self.folder, f"{centre_key(s.centre_re, s.centre_im)}-"
                                         f"{int(s.precision)}{SUFFIX}")

    def find(self, centre_re: str, centre_im: str, precision: int,
             max_iter: int) -> OrbitSnapshot | None:
        """The stored orbit of exactly this centre with at least `precision` bits, the one that
        goes furthest (complete for max_iter when one is); None when there is none to trust."""
        key = centre_key(centre_re, centre_im)
        cands = []
        for path in self._files(key):
            try:
                bits = int(os.path.basename(path)[len(key) + 1:-len(SUFFIX)])
            except ValueError:
                continue
            if bits >= precision and path not in self._bad:
                cands.append((bits, path))
        best = None
        for bits, path in sorted(cands):        # the least precise first: the cheapest to extend
            s = self.load(path)
            if s is None:
                continue
            if s.centre_re != str(centre_re).strip() or s.centre_im != str(centre_im).strip():
                # a sound file under another centre's name (copied, renamed): said (docs/USAGE.md)
                self._bad.add(path)
                self._note(f"{os.path.basename(path)} ignored: it holds the orbit of another "
                           "centre")
                continue
            if s.escaped or s.iterations >= max_iter:
                return s
            if best is None or s.length > best.length:
                best = s
        return best

    def load(self, path: str) -> OrbitSnapshot | None:
        """The snapshot in the file at `path`, or None (with a note) when it is not to be trusted."""
        try:
            s = self._read(path)
        except OSError as exc:
            self._note(f"{path} ignored: {exc.strerror or exc}")
            self._bad.add(path)
            return None
        except BadFile as exc:
            self._note(f"{os.path.basename(path)} ignored: {exc}")
            self._bad.add(path)
            return None
        try:
            os.utime(path)          # recently used: evicted last
        except OSError:
            pass
        return s

    def _read(self, path: str) -> OrbitSnapshot:
        # O_NONBLOCK: opening a named pipe waits for a writer otherwise (a regular file ignores it)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise BadFile("not a regular file (a folder, a pipe or a device)")
            if st.st_size > self.max_bytes:
                raise BadFile(f"{st.st_size:,} bytes, more than the whole cache may hold "
                              f"({self.max_bytes:,})")
            return read_snapshot(fh, st.st_size)

    def save(self, s: OrbitSnapshot) -> str | None:
        """Write the snapshot (whole or not at all), then evict the oldest files past max_bytes;
        the path written, or None when the folder cannot be written (noted)."""
        data = encode(s)
        if len(data) > self.max_bytes:
            return None
        path = self.path_for(s)
        with self._lock:
            try:
                os.makedirs(self.folder, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=self.folder, prefix=".ref-", suffix=".tmp")
                try:
                    with os.fdopen(fd, "wb") as fh:
                        fh.write(data)
                    os.replace(tmp, path)
                except BaseException:
                    try:
                        os.unlink(tmp)
                    except OSError:
                        pass
                    raise
            except OSError as exc:
                self._note(f"cannot write {self.folder}: {exc.strerror or exc}")
                return None
            self._bad.discard(path)
            self.evict(keep=path)
        return path

    def evict(self, keep: str | None = None) -> list[str]:
        """Remove the least recently used files until the folder holds at most max_bytes."""
        entries = []
        for p in self._files():
            try:
                st = os.stat(p)
            except OSError:
                continue
            entries.append((st.st_mtime_ns, st.st_size, p))
        total = sum(size for _, size, _ in entries)
        removed = []
        for _, size, p in sorted(entries):
            if total <= self.max_bytes:
                break
            if p == keep:
                continue
            try:
                os.unlink(p)
            except OSError:
                continue
            total -= size
            removed.append(p)
        return removed
