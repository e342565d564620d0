"""Whether `--scheduler ADDRESS` is a Dask scheduler at all, before Dask's client is let at it.

Dask's client trusts what it connects to: a server that sends something else made it try to
allocate exabytes (its messages start with their length), a server that accepts and says nothing
kept it waiting minutes past its timeout. A Dask scheduler speaks first on a new connection: a
message of a few hundred bytes (an 8-byte length, then that many bytes) describing itself. The
probe connects, reads that first message within the time allowed, checks its length is one a
handshake can have, and closes; anything else is one line saying what the address is not.
"""
from __future__ import annotations

import socket
import struct
import time

# a scheduler's handshake is a few hundred bytes; anything past this is not one
MAX_HANDSHAKE_BYTES = 1 << 20


def split_address(address: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of a Dask address ("tcp://h:8786", "h:8786", "tls://h:8786"); the
    port None when none is given. ValueError for what is not an address."""
    scheme, sep, rest = str(address).strip().partition("://")
    if not sep:
        scheme, rest = "tcp", scheme
    host, colon, port = rest.rpartition(":")
    if not colon:
        host, port = rest, ""
    host = host.strip("[]")
    if not host:
        raise ValueError(f"--scheduler {address}: give the scheduler as HOST:PORT or "
                         "tcp://HOST:PORT (or local)")
    if port and not port.isdigit():
        raise ValueError(f"--scheduler {address}: the port must be a number, not {port!r}")
    return scheme.lower(), host, int(port) if port else None


def probe_scheduler(address: str, timeout_s: float, default_port: int = 8786) -> None:
    """ValueError in one line unless a Dask scheduler answers at the tcp `address` within
    `timeout_s` seconds (connecting and its first message together)."""
    scheme, host, port = split_address(address)
    port = default_port if port is None else port
    deadline = time.monotonic() + float(timeout_s)
    where = f"--scheduler {address}"
    try:
        sock = socket.create_connection((host, port), timeout=max(0.1, timeout_s))
    except socket.timeout:
        raise ValueError(f"{where}: nothing answered within {timeout_s:g} s") from None
    except OSError as exc:
        raise ValueError(f"{where}: no Dask scheduler answered ({exc.strerror or exc})") from None
    with sock:
        def read(n: int) -> bytes:
            got = b""
            while len(got) < n:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout()
                sock.settimeout(left)
                chunk = sock.recv(n - len(got))
                if not chunk:
                    raise ConnectionError()
                got += chunk
            return got
        try:
            (length,) = struct.unpack("<Q", read(8))
            if not 0 < length <= MAX_HANDSHAKE_BYTES:
                raise ValueError(f"{where}: the server there does not speak Dask's protocol (its "
                                 f"first message claims {length:,} bytes); is the address a Dask "
                                 "scheduler's?")
            read(length)
        except socket.timeout:
            raise ValueError(f"{where}: the server accepted the connection but said nothing "
                             f"within {timeout_s:g} s; a Dask scheduler speaks at once, so this "
                             "is not one") from None
        except (ConnectionError, OSError):
            raise ValueError(f"{where}: the server closed the connection without the greeting a "
                             "Dask scheduler sends; is the address a Dask scheduler's?") from None


def tls_configured() -> bool:
    """Whether Dask's configuration names the client's TLS certificate (what a tls:// address
    needs)."""
    try:
        import dask
        return bool(dask.config.get("distributed.comm.tls.client.cert", None)
                    or dask.config.get("distributed.comm.tls.ca-file", None))
    except Exception:   # no dask config to read: certainly not configured
        return False
