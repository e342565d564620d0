"""A bounded on-disk cache of reference orbits, so that reopening a deep location is instant.

One file per orbit in the user's cache folder (`cache_folder()`: $GPU_EXPLORER_CACHE_DIR, else
the platform's convention: $XDG_CACHE_HOME or ~/.cache on Linux, ~/Library/Caches on macOS,
%LOCALAPPDATA% on Windows; then gpu-explorer/references). A file is named by a hash of the centre
and the precision, and holds:

    MAGIC (8 bytes) | header length (4 bytes, little-endian) | header (JSON) | payload

The header names the format version, the centre strings, precision, iterations, the orbit's
length and the payload's size and SHA-256; the payload is the orbit's float64 points and the
exact form of its tiny points (orbit_snapshot.py). A file is trusted only when the magic, the
version, the sizes, the checksum, the snapshot's own consistency check and the centre all agree;
anything else (corrupt, truncated, foreign, another version) is ignored with a note in `notes`
and the log, and never read again this run. The folder is held to `max_bytes`: after each save
the least recently used files go (a load touches its file).
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import threading

import numpy as np

from ...user_cache import ENV_FOLDER, platform_cache_folder
from .orbit_snapshot import OrbitSnapshot

MAGIC = b"GXREFORB"
VERSION = 1
SUFFIX = ".ref"
DEFAULT_MAX_BYTES = 1 << 30
# the header holds two centres of up to 20,000 characters and the last point in hex
MAX_HEADER_BYTES = 1 << 20

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
              "payload_bytes": len(payload), "sha256": hashlib.sha256(payload).hexdigest()}
    head = json.dumps(header, separators=(",", ":")).encode()
    return MAGIC + len(head).to_bytes(4, "little") + head + payload


class BadFile(ValueError):
    """A cache file that is not to be trusted (the message says why)."""


def decode(data: bytes) -> OrbitSnapshot:
    """The snapshot in a cache file's bytes; BadFile saying what is wrong."""
    if data[:len(MAGIC)] != MAGIC:
        raise BadFile("not a reference cache file (wrong magic)")
    if len(data) < len(MAGIC) + 4:
        raise BadFile("truncated (no header)")
    n = int.from_bytes(data[len(MAGIC):len(MAGIC) + 4], "little")
    if n > MAX_HEADER_BYTES or len(MAGIC) + 4 + n > len(data):
        raise BadFile(f"truncated or damaged header ({n:,} bytes announced)")
    try:
        h = json.loads(data[len(MAGIC) + 4:len(MAGIC) + 4 + n].decode())
        if not isinstance(h, dict):
            raise ValueError("not an object")
    except ValueError as exc:
        raise BadFile(f"unreadable header ({exc})") from None
    if h.get("version") != VERSION:
        raise BadFile(f"format version {h.get('version')!r}, this app reads {VERSION}")
    try:
        length, k = int(h["length"]), int(h["tiny"])
        sizes = (16 * length, 8 * k, 16 * k, 4 * k)
        payload = data[len(MAGIC) + 4 + n:]
        if length < 1 or k < 0 or len(payload) != sum(sizes) or h["payload_bytes"] != sum(sizes):
            raise BadFile(f"payload of {len(payload):,} bytes, expected {sum(sizes):,} "
                          f"(truncated or damaged)")
        if hashlib.sha256(payload).hexdigest() != h["sha256"]:
            raise BadFile("checksum mismatch (damaged)")
        parts, at = [], 0
        for size, dt in zip(sizes, ("<c16", "<i8", "<f8", "<i4")):
            parts.append(np.frombuffer(payload, dtype=dt, count=size // np.dtype(dt).itemsize,
                                       offset=at).astype(dt[1:]))
            at += size
        period = h["period"]
        s = OrbitSnapshot(
            centre_re=str(h["centre_re"]), centre_im=str(h["centre_im"]),
            precision=int(h["precision"]), iterations=int(h["iterations"]),
            escaped=bool(h["escaped"]), period=None if period is None else int(period),
            length=length, z=parts[0], tiny_n=parts[1], tiny_m=parts[2].reshape(k, 2),
            tiny_e=parts[3], last_re=str(h["last_re"]), last_im=str(h["last_im"]),
            deriv=(float(h["deriv"][0]), float(h["deriv"][1]), int(h["deriv"][2])))
        return s.check()
    except BadFile:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
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
            if s is None or s.centre_re != str(centre_re).strip() or \
                    s.centre_im != str(centre_im).strip():
                continue
            if s.escaped or s.iterations >= max_iter:
                return s
            if best is None or s.length > best.length:
                best = s
        return best

    def load(self, path: str) -> OrbitSnapshot | None:
        """The snapshot in the file at `path`, or None (with a note) when it is not to be trusted."""
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            self._note(f"{path} ignored: {exc.strerror or exc}")
            self._bad.add(path)
            return None
        try:
            s = decode(data)
        except BadFile as exc:
            self._note(f"{os.path.basename(path)} ignored: {exc}")
            self._bad.add(path)
            return None
        try:
            os.utime(path)          # recently used: evicted last
        except OSError:
            pass
        return s

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
