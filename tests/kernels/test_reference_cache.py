"""The on-disk reference cache: an orbit saved and found again is the same orbit (and extends bit
for bit as the original), the folder stays under its size bound by evicting the least recently
used files, and a corrupt, truncated, foreign or other-version file is ignored with a note, never
trusted. A renderer given a store with the cache takes a stored orbit instead of computing one."""
from __future__ import annotations

import os

import numpy as np
import pytest

from kernels.backend import resolve
from kernels.mandelbrot.reference import reference_cache as rc
from kernels.mandelbrot.benches.locations import KORMANYOS_VERY_DEEP
from kernels.mandelbrot.reference.reference import ReferenceOrbit
from kernels.mandelbrot.reference.reference_cache import ReferenceCache, cache_folder
from kernels.mandelbrot.reference.reference_store import ReferenceStore
from kernels.mandelbrot.deep.renderer import DeepRenderer
from kernels.mandelbrot.requests.deep_request import DeepRequest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

# a centre below float64's range: its orbit's points are held only in the exact floatexp form
TINY_RE, TINY_IM = "1.25e-400", "-3e-401"


def orbit(re=TINY_RE, im=TINY_IM, bits=1152, iters=900):
    return ReferenceOrbit(re, im, bits).extend(iters)


def same(a: ReferenceOrbit, b: ReferenceOrbit):
    (oa, ea), (ob, eb) = a.arrays(), b.arrays()
    return (a.length == b.length and np.array_equal(oa, ob) and np.array_equal(ea, eb)
            and a.escaped == b.escaped and a.period == b.period)


def test_an_orbit_comes_back_from_disk_as_it_was_and_extends_bit_for_bit(tmp_path):
    cache = ReferenceCache(str(tmp_path), max_bytes=1 << 26)
    o = orbit()
    assert o.snapshot().tiny_n.shape[0] > 0          # the exact form of tiny points travels too
    path = cache.save(o.snapshot())
    assert path and os.path.exists(path)
    snap = cache.find(TINY_RE, TINY_IM, precision=1100, max_iter=900)
    back = ReferenceOrbit.from_snapshot(snap)
    assert same(o, back)
    assert same(o.extend(1500), back.extend(1500))
    # no orbit for another centre, a higher precision, or none at all
    assert cache.find(TINY_RE + "1", TINY_IM, 1100, 900) is None
    assert cache.find(TINY_RE, TINY_IM, 1216, 900) is None
    assert not cache.notes


def test_the_folder_is_held_to_its_size_by_evicting_the_least_recently_used(tmp_path):
    centres = [f"-0.75{i}" for i in range(4)]
    probe = ReferenceCache(str(tmp_path / "probe"))
    size = len(rc.encode(orbit(centres[0], "0.1", 256, 3000).snapshot()))
    cache = ReferenceCache(str(tmp_path / "c"), max_bytes=int(2.5 * size))
    paths = []
    for i, c in enumerate(centres[:2]):
        paths.append(cache.save(orbit(c, "0.1", 256, 3000).snapshot()))
        os.utime(paths[-1], ns=(10**18 + i, 10**18 + i))
    assert cache.find(centres[0], "0.1", 256, 3000) is not None      # used: now the newest
    paths.append(cache.save(orbit(centres[2], "0.1", 256, 3000).snapshot()))
    left = sorted(os.listdir(cache.folder))
    assert len(left) == 2 and os.path.basename(paths[1]) not in left
    total = sum(os.path.getsize(os.path.join(cache.folder, f)) for f in left)
    assert total <= cache.max_bytes
    assert probe.notes == []


def _corrupt(data: bytes, how: str) -> bytes:
    if how == "flipped byte":
        i = len(data) - 100
        return data[:i] + bytes([data[i] ^ 0x40]) + data[i + 1:]
    if how == "truncated":
        return data[:len(data) // 2]
    if how == "foreign":
        return b"PK\x03\x04 a zip file, not ours" + data[40:]
    if how == "other version":
        return data.replace(b'"version":%d' % rc.VERSION, b'"version":7', 1)
    if how == "bad header":
        return data.replace(b'"length"', b'"lenxth"', 1)
    raise AssertionError(how)


@pytest.mark.parametrize("how, words", [("flipped byte", "checksum"), ("truncated", "truncated"),
                                        ("foreign", "wrong magic"),
                                        ("other version", "format version 7"),
                                        ("bad header", "damaged")])
def test_a_damaged_or_foreign_file_is_ignored_with_a_note(tmp_path, how, words):
    cache = ReferenceCache(str(tmp_path))
    o = orbit("-0.75", "0.1", 256, 2000)
    path = cache.save(o.snapshot())
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:
        fh.write(_corrupt(data, how))
    assert cache.find("-0.75", "0.1", 256, 2000) is None
    assert len(cache.notes) == 1 and words in cache.notes[0], cache.notes
    # and a renderer given the cache computes its own orbit instead, with the same counts
    store = ReferenceStore(cache, save_ms=1e9)
    req = DeepRequest("-0.75", "0.1", "1e-20", (8, 6), 2000)
    r = DeepRenderer(resolve("cpu"))
    r.references = store
    res = r.render_values(req)
    assert not res.reused and store.loaded == 0
    fresh = DeepRenderer(resolve("cpu")).render_values(req)
    assert np.array_equal(res.values, fresh.values)


def test_a_file_of_another_centre_under_this_centres_name_is_not_trusted(tmp_path):
    cache = ReferenceCache(str(tmp_path))
    other = cache.save(orbit("-0.76", "0.1", 256, 500).snapshot())
    mine = cache.path_for(orbit("-0.75", "0.1", 256, 10).snapshot())
    os.replace(other, mine)
    assert cache.find("-0.75", "0.1", 256, 500) is None


def test_reopening_a_location_takes_the_stored_orbit(tmp_path):
    loc = KORMANYOS_VERY_DEEP
    req = DeepRequest(loc.center_re[:120], loc.center_im[:120], "1e-100", (12, 8), 3000)
    first = DeepRenderer(resolve("cpu"))
    first.references = ReferenceStore(ReferenceCache(str(tmp_path)), save_ms=0)
    a = first.render_values(req)
    assert not a.reused and len(os.listdir(tmp_path)) == 1
    again = DeepRenderer(resolve("cpu"))          # a new start of the app: a new store
    again.references = store = ReferenceStore(ReferenceCache(str(tmp_path)), save_ms=0)
    b = again.render_values(req)
    assert b.reused and again.reference_source == "disk" and store.loaded == 1
    assert b.reference.compute_ms == 0          # loaded, never iterated
    assert np.array_equal(a.values, b.values)


def test_the_cache_folder_follows_each_platforms_convention():
    home = os.path.expanduser("~")
    assert cache_folder({"GPU_EXPLORER_CACHE_DIR": "/x"}, "linux") == "/x/references"
    assert cache_folder({"XDG_CACHE_HOME": "/c"}, "linux") == "/c/gpu-explorer/references"
    assert cache_folder({}, "linux") == os.path.join(home, ".cache", "gpu-explorer", "references")
    assert cache_folder({}, "darwin") == os.path.join(home, "Library", "Caches", "gpu-explorer",
                                                      "references")
    assert cache_folder({"LOCALAPPDATA": "/l"}, "win32") == os.path.join(
        "/l", "gpu-explorer", "Cache", "references")
