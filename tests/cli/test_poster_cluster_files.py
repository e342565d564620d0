"""A local Dask cluster's workers write their bands straight into the poster's parts file
(tiles.BandIntoFile): nothing but the order comes back through the cluster's comms, where every
band's bytes used to travel (the whole picture, pickled). The poster equals the picture rendered
whole."""
import numpy as np
import pytest

import main
from kernels.mandelbrot.tiles import BandIntoFile, BandJob
from kernels.mandelbrot.requests.request import MandelbrotRequest
from kernels.spread import LocalPool

pytest.importorskip("distributed", reason="the cluster extra (Dask) is not installed")

PLACE = ["--center", "-0.7436438870,0.1318259043", "--width", "0.003", "--iters", "800"]


def test_a_local_clusters_bands_come_back_empty_and_the_poster_is_whole(tmp_path, monkeypatch):
    from kernels.spread import cluster
    came_back = []
    real = cluster.DaskPool.ordered

    def ordered(self, jobs, *a, **kw):
        assert self.shares_files
        for i, result in real(self, jobs, *a, **kw):
            came_back.append(result)
            yield i, result
    monkeypatch.setattr(cluster.DaskPool, "ordered", ordered)
    outs = []
    for name, extra in (("whole.npy", []), ("banded.npy", ["--scheduler", "local"])):
        out = tmp_path / name
        assert main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", "96x70",
                          *PLACE, "--out", str(out), *extra]) == 0
        outs.append(np.load(out))
    # no pixels through the cluster's comms: each band hands back its exact counts ({}: float64)
    assert came_back and all(r == {} for r in came_back), [type(r) for r in came_back]
    assert np.array_equal(*outs)


def test_band_into_file_writes_only_its_rows(tmp_path, cpu_backend):
    req = MandelbrotRequest(-0.75, 0.1, 0.05, (40, 30), 300)
    path = tmp_path / "p.npy"
    picture = np.lib.format.open_memmap(path, mode="w+", dtype=np.uint8, shape=(30, 40, 4))
    picture[:] = 7
    picture.flush()
    with LocalPool(cpu_backend) as pool:
        got = [r for _, r in pool.ordered([BandIntoFile.into(BandJob(req, 10, 8), picture)])]
        whole = [r for _, r in pool.ordered([BandJob(req, 0, 30)])][0]
    assert got == [{}]          # no pixels back: the band's exact counts (none, float64)
    again = np.load(path)
    assert np.array_equal(again[10:18], whole[10:18])
    assert (again[:10] == 7).all() and (again[18:] == 7).all()
