"""The perturbation loop's layout of the BLA table built while its orbit is computed
(table_ahead.py) is perturbation_loop.loop_tables' of bla.build_table's table bit for bit in every
row the loop reads: short orbits and orbits of many blocks, points below float64's range, escaping
orbits, orbits stopped at their period in the middle of a chunk, an extended orbit, the second
thread caught up or far behind. A cancelled extend leaves nothing running and the next frame
right; the renderer's frames are the same with and without it (values and stats bit for bit), and
frames that read the table's entries (float32 deltas, the extended format) get them."""
import threading
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.benches import locations as loc
from kernels.mandelbrot.tables.bla import CHUNK_LEVELS, build_table
from kernels.mandelbrot.tables.flat_build import BW, loop_tables
from kernels.mandelbrot.reference.reference import ReferenceOrbit
from kernels.mandelbrot.deep.renderer import DeepRenderer
from kernels.mandelbrot.requests.deep_request import DeepRequest
from kernels.mandelbrot.deep.table_ahead import BUNCH, TableAhead

from test_deep import near

BLOCK = 1 << CHUNK_LEVELS
RESOURCES = Path(__file__).resolve().parents[2] / "resources"
C_MAX = (0.5, -60)


def kf(name, size=(12, 12)):
    """KF's benchmark location `name` (4e533: the extended format, 5e227: perturbation)."""
    from services.kfr import parse_kfr
    loc_ = parse_kfr((RESOURCES / f"kf-{name}.kfr").read_text(errors="replace"))
    return DeepRequest(loc_.center_re, loc_.center_im, str(loc_.width(*size)), size,
                       loc_.iterations)


def _renderer(ahead=True, number_type="float64"):
    from kernels.backend import resolve
    from kernels.mandelbrot.deep import table_ahead
    if ahead:
        table_ahead.warm()      # frames build their table ahead once its code is loaded
    r = DeepRenderer(resolve("cpu"))
    r.table_ahead = ahead
    r.number_type = number_type
    return r


def _same_as_build_table(orbit, built, c_max=C_MAX):
    """`built` (TableAhead.finish's answer) against build_table and loop_tables of the orbit."""
    orb, oexp, tab, tabe, levels, flat = built
    want_o, want_e = ReferenceOrbit.arrays(orbit)
    assert orb.tobytes() == want_o.tobytes() and oexp.tobytes() == want_e.tobytes()
    want = build_table(want_o, want_e, c_max, parallel=False)
    if tab is not None:                 # too short for a block: build_table's own table
        for got, exp in zip((tab, tabe, levels), want):
            assert got.tobytes() == exp.tobytes()
    assert (levels[:, 1] == want[2][:, 1]).all()
    zo, bt = loop_tables(want_o, *want)
    zf, bf = flat
    assert zf.tobytes() == zo.reshape(-1).tobytes()
    rows = bf.reshape(-1, BW)
    for (off, count), (off2, _) in zip(levels, want[2]):
        assert rows[off:off + count].tobytes() == bt[off2:off2 + count].tobytes()


def _ahead_orbit(location, precision, iters, radius=None, thread=True, catch_up=None):
    """(orbit, TableAhead.finish's answer): catch_up = k steps the second thread's work in by
    hand (no thread) after every k-th point it is told of, 0 never (all of it at the end)."""
    orbit = ReferenceOrbit(location.center_re, location.center_im, precision)
    ahead = TableAhead(iters + 1, C_MAX, 32, thread=thread and catch_up is None)
    if catch_up is not None:
        told = [0]
        advance = ahead.advance

        def advance_and_build(buf, points, tiny=None):
            advance(buf, points, tiny)
            told[0] += 1
            if catch_up and told[0] % catch_up == 0:
                ahead._catch_up(ahead._buf, ahead._final, ahead._tiny)
        ahead.advance = advance_and_build
    orbit.extend(iters, radius_log2=radius, ahead=ahead)
    return orbit, ahead, ahead.finish(orbit.length)


SMALL = [("spiral", loc.MISIUREWICZ_I, 256, 6000), ("minibrot-424", loc.MINIBROT_424, 1200, 5000),
         ("escaping", loc.Location("out", "-0.7436438870371587", "0.1318259042053119", ""), 128,
          50000), ("short", loc.MISIUREWICZ_I, 128, 300), ("two blocks", loc.MISIUREWICZ_I, 128,
                                                           2 * BLOCK + 2)]


@pytest.mark.parametrize("catch_up", [None, 1, 3, 0])
@pytest.mark.parametrize("name, location, precision, iters", SMALL, ids=[s[0] for s in SMALL])
def test_small_orbits(name, location, precision, iters, catch_up):
    orbit, ahead, built = _ahead_orbit(location, precision, iters, catch_up=catch_up)
    _same_as_build_table(orbit, built)
    if catch_up == 1 and orbit.length >= 2 * BLOCK + 3:
        assert ahead._blocks >= 1          # the blocks came from the stream, not the end


def test_points_below_float64s_range_are_exact():
    orbit, _, built = _ahead_orbit(loc.MINIBROT_424, 1200, 5000, catch_up=1)
    assert (built[1] < -1000).any()
    _same_as_build_table(orbit, built)


@pytest.mark.parametrize("catch_up", [None, 1, 7, 0])
def test_a_long_orbit_stopped_at_its_period_mid_chunk(catch_up):
    from kernels.mandelbrot.reference.period_stop import radius_log2
    from kernels.mandelbrot.deep.renderer import FrameGeometry
    req = kf("4e533")
    probe = ReferenceOrbit(req.center_re, req.center_im, req.precision)
    radius = radius_log2(FrameGeometry.of(req, probe))
    orbit, ahead, built = _ahead_orbit(
        loc.Location("4e533", req.center_re, req.center_im, ""), req.precision, req.max_iter,
        radius=radius, catch_up=catch_up)
    assert orbit.period is not None and orbit.length < req.max_iter // 2
    assert orbit.length % BLOCK not in (0, 1, 2)        # the last block is partial
    _same_as_build_table(orbit, built)
    assert built[2] is None and built[4][-1, 0] + built[4][-1, 1] > sum(built[4][:, 1])    # gaps
    if catch_up == 1:
        assert ahead._blocks == (orbit.length - 2) // BLOCK
    if catch_up == 0:       # all its blocks left to the end: shared with a helper thread there
        assert (orbit.length - 2) // BLOCK >= 2 * BUNCH


def test_an_extended_orbit_starts_from_its_old_points():
    orbit = ReferenceOrbit(loc.MISIUREWICZ_I.center_re, loc.MISIUREWICZ_I.center_im, 256)
    orbit.extend(3 * BLOCK + 5)
    ahead = TableAhead(9000 + 1, C_MAX, 32, thread=False)
    orbit.extend(9000, ahead=ahead)
    ahead._catch_up(ahead._buf, ahead._final, ahead._tiny)
    _same_as_build_table(orbit, ahead.finish(orbit.length))


class _CancelAfter:
    def __init__(self, n):
        self.n = n

    def check(self):
        self.n -= 1
        if self.n < 0:
            raise KeyboardInterrupt("cancelled")


def _ahead_threads():
    return [t for t in threading.enumerate() if t.name == "BLA table ahead" and t.is_alive()]


def test_a_cancelled_extend_leaves_the_orbit_and_stops_the_thread():
    orbit = ReferenceOrbit(loc.MISIUREWICZ_I.center_re, loc.MISIUREWICZ_I.center_im, 2000)
    ahead = TableAhead(200_001, C_MAX, 32, thread=True)
    with pytest.raises(KeyboardInterrupt):
        orbit.extend(200_000, cancel=_CancelAfter(2), ahead=ahead)
    ahead.abandon()
    assert orbit.length == 1 and not _ahead_threads()


def test_renderer_cancel_then_the_next_frame_is_right():
    req = kf("5e227", (8, 8))
    r = _renderer()
    with pytest.raises(KeyboardInterrupt):
        r.render_values(req, cancel=_CancelAfter(1))
    assert r._ahead is None and not _ahead_threads()
    got = r.render_values(req)
    want = _renderer(ahead=False).render_values(req)
    assert got.values.tobytes() == want.values.tobytes() and got.stats == want.stats
    assert got.stats["bla_steps"] > 0


def test_renderer_frames_are_the_same_with_and_without():
    req = kf("5e227", (8, 8))
    assert req.format == "perturbation"
    r = _renderer()
    got = r.render_values(req)
    plain = _renderer(ahead=False)
    want = plain.render_values(req)
    assert got.values.tobytes() == want.values.tobytes() and got.stats == want.stats
    assert got.stats["bla_steps"] > 0
    assert r._table[1] is None and plain._table[1] is not None     # the layout alone kept
    assert not _ahead_threads()
    # the next frame of the same orbit and bound reuses the layout built ahead
    again = r.render_values(req)
    assert again.table_reused and again.values.tobytes() == want.values.tobytes()


def test_extended_format_frames_build_their_table_after_the_orbit():
    cre, cim = near(loc.KORMANYOS_VERY_DEEP, "1e-600")
    req = DeepRequest(cre, cim, "1e-600", (10, 8), 5 * BLOCK)
    assert req.format == "extended"
    r = _renderer()
    got = r.render_values(req)
    want = _renderer(ahead=False).render_values(req)
    assert got.reference.length > 2 * BLOCK + 2 and r._table[1] is not None
    assert got.values.tobytes() == want.values.tobytes() and got.stats == want.stats


def test_float32_frames_after_a_layout_built_ahead():
    # an orbit escaping after a few blocks, far below max_iter
    req = DeepRequest("-0.7436438870371587", "0.1318259042053119", "1e-20", (12, 10), 20000)
    r = _renderer()
    first = r.render_values(req)
    assert r._table[1] is None and first.number_type == "float64"
    assert first.reference.length > 2 * BLOCK + 2
    r.number_type = "float32"
    got = r.render_values(req)
    want = _renderer(ahead=False, number_type="float32").render_values(req)
    assert got.number_type == want.number_type == "float32" and not got.table_reused
    assert got.values.tobytes() == want.values.tobytes() and got.stats == want.stats
    assert got.stats["bla_steps"] > 0
    # and back: the float64 frame reuses the table with its entries
    r.number_type = "float64"
    back = r.render_values(req)
    assert back.table_reused and back.values.tobytes() == first.values.tobytes()


def test_a_failed_build_ahead_falls_back_to_the_build_after(monkeypatch):
    """The second thread's failure, or a reserve the system refuses, costs the frame its head
    start, not its picture."""
    from kernels.mandelbrot.deep import renderer as dr
    req = DeepRequest("-0.7436438870371587", "0.1318259042053119", "1e-20", (12, 10), 20000)
    want = _renderer(ahead=False).render_values(req)

    def broken(self, points, parallel=True):
        self._halt()
        raise RuntimeError("the second thread failed")
    monkeypatch.setattr(TableAhead, "finish", broken)
    got = _renderer().render_values(req)
    assert got.values.tobytes() == want.values.tobytes() and got.stats == want.stats
    assert not _ahead_threads()

    def refused(*args, **kwargs):
        raise MemoryError("reserve refused")
    monkeypatch.setattr(dr, "TableAhead", refused)
    r = _renderer()
    got = r.render_values(req)
    assert r._table[1] is not None          # built after the orbit, with its entries
    assert got.values.tobytes() == want.values.tobytes()


def test_a_frame_cancelled_at_its_table_leaves_no_thread_waiting():
    from kernels.scheduler import Cancelled
    req = DeepRequest("-0.7436438870371587", "0.1318259042053119", "1e-20", (12, 10), 20000)
    r = _renderer()

    def progress(fraction, stage):
        if stage == "table":
            raise Cancelled()
    with pytest.raises(Cancelled):
        r.render_values(req, progress=progress)
    assert r._ahead is None and not _ahead_threads()
    assert r.render_values(req).values.shape == (10, 12)
