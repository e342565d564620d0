"""A band written into the poster's file by a worker of another process (tiles.BandIntoFile): one
write from the renderer's own buffer at the band's rows, read back through the poster's own memory
map; a band that does not fit the file is refused before anything is written."""
import numpy as np
import pytest

from kernels.mandelbrot.requests.request import MandelbrotRequest
from kernels.mandelbrot.tiles import BandIntoFile, BandJob
from kernels.spread.worker import Worker


def _picture(path, shape, dtype):
    picture = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
    picture[:] = 7
    picture.flush()
    return picture


@pytest.mark.parametrize("values", [False, True])
def test_the_band_lands_in_its_rows_and_the_posters_map_sees_it(tmp_path, cpu_backend, values):
    req = MandelbrotRequest(-0.75, 0.1, 0.05, (40, 30), 300)
    shape, dtype = ((30, 40), np.float64) if values else ((30, 40, 4), np.uint8)
    picture = _picture(tmp_path / "p.npy", shape, dtype)
    worker = Worker(cpu_backend)
    # no pixels come back, only the band's count of pixels float64 could not place (none here)
    assert BandIntoFile.into(BandJob(req, 10, 8, values), picture)(worker) == {}
    whole = BandJob(req, 0, 30, values)(worker)
    assert np.array_equal(picture[10:18], whole[10:18])       # the poster's own map, unflushed
    assert (picture[:10] == 7).all() and (picture[18:] == 7).all()
    assert np.array_equal(np.load(tmp_path / "p.npy")[10:18], whole[10:18])


def test_a_band_that_does_not_fit_the_file_is_refused(tmp_path, cpu_backend):
    req = MandelbrotRequest(-0.75, 0.1, 0.05, (40, 30), 300)
    picture = _picture(tmp_path / "p.npy", (30, 41, 4), np.uint8)
    with pytest.raises(ValueError, match="not the file's uint8"):
        BandIntoFile.into(BandJob(req, 10, 8), picture)(Worker(cpu_backend))
    assert (np.load(tmp_path / "p.npy") == 7).all()
