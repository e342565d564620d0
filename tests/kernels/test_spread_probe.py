"""`--scheduler` at something that is not a Dask scheduler (kernels/spread/probe.py, cluster.py):
a server that sends garbage, one that accepts and says nothing, one that hangs up, a tls://
address without certificates: one line each, within the time allowed."""
import socket
import struct
import threading
import time

import pytest

from kernels.spread import cluster, open_pool, probe

pytest.importorskip("distributed", reason="the cluster extra (Dask) is not installed")


class Server:
    """A local TCP server that does `act(conn)` with each connection."""

    def __init__(self, act):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.act = act
        self.conns = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            self.act(conn)

    def close(self):
        self.sock.close()
        for c in self.conns:
            c.close()


def garbage(conn):
    conn.sendall(b"HTTP/1.1 200 OK\r\n\r\nhello there, not dask" * 4)


def silent(conn):
    pass


def hang_up(conn):
    conn.close()


@pytest.mark.parametrize("act, words", [(garbage, "does not speak Dask's protocol"),
                                        (silent, "said nothing within 1 s"),
                                        (hang_up, "closed the connection")])
def test_a_server_that_is_not_a_scheduler_gets_one_line_in_time(cpu_backend, monkeypatch, act,
                                                                 words):
    monkeypatch.setattr(cluster, "CONNECT_TIMEOUT_S", 1)
    server = Server(act)
    try:
        t = time.monotonic()
        with pytest.raises(ValueError) as err:
            open_pool(cpu_backend, scheduler=f"tcp://127.0.0.1:{server.port}")
        assert time.monotonic() - t < 3
    finally:
        server.close()
    msg = str(err.value)
    assert words in msg and "\n" not in msg and msg.startswith("--scheduler tcp://127.0.0.1:")


def test_nothing_listening_is_one_line(cpu_backend):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(ValueError, match="no Dask scheduler answered") as err:
        open_pool(cpu_backend, scheduler=f"127.0.0.1:{port}")
    assert "\n" not in str(err.value)


def test_tls_without_certificates_is_one_line(cpu_backend):
    with pytest.raises(ValueError, match="needs the client's TLS certificate") as err:
        open_pool(cpu_backend, scheduler="tls://127.0.0.1:8786")
    assert "\n" not in str(err.value)


def test_a_greeting_of_a_handshake_size_passes_the_probe():
    server = Server(lambda c: c.sendall(struct.pack("<Q", 5) + b"hello"))
    try:
        probe.probe_scheduler(f"tcp://127.0.0.1:{server.port}", 2)
    finally:
        server.close()


@pytest.mark.parametrize("address", ["tcp://", "tcp://host:port"])
def test_an_address_that_is_not_one(address):
    with pytest.raises(ValueError, match="--scheduler"):
        probe.split_address(address)


def test_a_real_scheduler_passes_the_probe():
    import asyncio

    from distributed import Scheduler

    async def main():
        async with Scheduler(host="127.0.0.1", port=0, dashboard_address=None) as s:
            await asyncio.get_running_loop().run_in_executor(
                None, probe.probe_scheduler, s.address, 5)
    asyncio.run(main())
