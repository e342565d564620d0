"""Faults of the reference cache's files (kernels/mandelbrot/reference/reference_cache.py, issue 35):
whatever lies under an entry's name (a header with overflowing numbers or deep nesting, a huge
file, a named pipe, a header changed after the file was written) is set aside with a note at
once, never a traceback on each render, a hang or the whole file read into memory."""
import os
import threading

import pytest
from faultkit import run_python

from kernels.mandelbrot.reference import reference_cache as rc
from kernels.mandelbrot.reference.reference_cache import ReferenceCache
from kernels.mandelbrot.reference.reference_store import ReferenceStore

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

CENTRE = ("-0.75", "0.1")


@pytest.fixture
def saved(tmp_path):
    """(cache, path): a cache holding one real orbit of CENTRE (256 bits, 600 iterations)."""
    from kernels.mandelbrot.reference.reference import ReferenceOrbit
    cache = ReferenceCache(str(tmp_path))
    path = cache.save(ReferenceOrbit(*CENTRE, 256).extend(600).snapshot())
    assert cache.find(*CENTRE, 256, 600) is not None
    return ReferenceCache(str(tmp_path)), path       # a new run: nothing known about the file


def split(data: bytes) -> tuple[str, bytes]:
    """(the header's text, whatever follows it) of a cache file's bytes."""
    n = int.from_bytes(data[len(rc.MAGIC):len(rc.MAGIC) + 4], "little")
    at = len(rc.MAGIC) + 4
    return data[at:at + n].decode(), data[at + n:]


def joined(header: str, rest: bytes) -> bytes:
    head = header.encode()
    return rc.MAGIC + len(head).to_bytes(4, "little") + head + rest


def set_aside_once(cache, path, words):
    """The entry is not used, says why once, and is not read again this run."""
    for _ in range(2):
        assert cache.find(*CENTRE, 256, 600) is None
    assert len(cache.notes) == 1 and words in cache.notes[0], cache.notes
    assert os.path.basename(path) in cache.notes[0]


@pytest.mark.parametrize("key", ["iterations", "precision", "period", "length"])
def test_a_header_number_that_overflows_sets_the_entry_aside(saved, key):
    cache, path = saved
    header, rest = split(open(path, "rb").read())
    import json
    h = json.loads(header)
    h[key] = "HUGE"
    with open(path, "wb") as fh:
        fh.write(joined(json.dumps(h).replace('"HUGE"', "1e999"), rest))
    set_aside_once(cache, path, "ignored")


def test_a_deeply_nested_header_sets_the_entry_aside(saved):
    cache, path = saved
    _, rest = split(open(path, "rb").read())
    with open(path, "wb") as fh:
        fh.write(joined("[" * 200_000 + "]" * 200_000, rest))
    set_aside_once(cache, path, "unreadable header")


def test_a_renderer_over_a_bad_entry_renders_and_notes_it_once(saved):
    """The path a render takes (ReferenceStore.find) twice: no exception, one note."""
    from kernels.mandelbrot.requests.deep_request import DeepRequest
    cache, path = saved
    header, rest = split(open(path, "rb").read())
    with open(path, "wb") as fh:
        fh.write(joined(header.replace('"iterations":600', '"iterations":1e999'), rest))
    store = ReferenceStore(cache)
    req = DeepRequest(*CENTRE, "1e-20", (8, 6), 600)
    assert store.find(req, 256) is None and store.find(req, 256) is None
    assert len(store.notes) == 1


def test_a_changed_last_point_in_the_header_is_caught_by_the_checksum(saved):
    cache, path = saved
    header, rest = split(open(path, "rb").read())
    import json
    h = json.loads(header)
    h["last_re"] = h["last_re"][:-3] + ("0" if h["last_re"][-3] != "0" else "1") + h["last_re"][-2:]
    with open(path, "wb") as fh:
        fh.write(joined(json.dumps(h, separators=(",", ":")), rest))
    set_aside_once(cache, path, "checksum")


@pytest.mark.parametrize("magic", [b"", rc.MAGIC])
def test_a_huge_file_under_an_entrys_name_is_not_read_whole(saved, magic):
    """3 GiB (sparse) under an address-space limit of 2 GiB: refused from its first bytes and its
    size, in a child process (the limit is the child's alone)."""
    _, path = saved
    with open(path, "r+b") as fh:
        if not magic:
            fh.write(b"\0" * len(rc.MAGIC))
        fh.truncate(3 << 30)
    r = run_python(f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from kernels.mandelbrot.reference.reference_cache import ReferenceCache
cache = ReferenceCache({os.path.dirname(path)!r})
print(cache.find({CENTRE[0]!r}, {CENTRE[1]!r}, 256, 600), cache.notes)
""", timeout=60)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("None [") and os.path.basename(path) in r.stdout, r.stdout


def test_a_named_pipe_under_an_entrys_name_is_set_aside_at_once(saved):
    cache, path = saved
    os.remove(path)
    os.mkfifo(path)
    done = []
    t = threading.Thread(target=lambda: done.append(cache.find(*CENTRE, 256, 600)), daemon=True)
    t.start()
    t.join(20)
    if t.is_alive():                         # blocked opening the pipe: a writer frees it
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        t.join(20)
        pytest.fail("the cache blocked on a named pipe")
    assert done == [None]
    assert len(cache.notes) == 1 and "not a regular file" in cache.notes[0], cache.notes
