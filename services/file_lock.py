"""A lock held around a read-modify-write of a small file (the user's bookmarks), so that two
windows or processes changing it at once both keep their change instead of the last write
replacing the first's.

The lock is an advisory lock (flock) on `.NAME.lock` beside the file: the OS drops it when its
process ends, however it ends, so a killed process never leaves it held; the empty lock file
stays (removing it would let a third process lock a new file while the second holds the old).
Where flock is missing (Windows), nothing is locked: the atomic write still keeps the file whole.
"""
from __future__ import annotations

import contextlib
import errno
import os
import time

try:
    import fcntl
except ImportError:             # pragma: no cover - Windows
    fcntl = None

# how long to wait for another process's change (each takes milliseconds) before giving up
WAIT_S = 10.0


def lock_path(path: str) -> str:
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f".{name}.lock")


@contextlib.contextmanager
def file_lock(path: str, wait_s: float = WAIT_S):
    """Hold the lock of `path` (its folder is made if missing) for the body; OSError (EAGAIN) in
    plain words when another process held it for `wait_s` seconds."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    if fcntl is None:           # pragma: no cover - Windows
        yield
        return
    fd = os.open(lock_path(path), os.O_RDWR | os.O_CREAT, 0o666)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise OSError(errno.EAGAIN, f"{os.path.basename(path)} is being changed by "
                                  f"another process (for over {wait_s:.0f} s); try again") from None
                time.sleep(0.005)   # the other change takes a few milliseconds
        yield
    finally:
        os.close(fd)            # closing the descriptor drops the lock
