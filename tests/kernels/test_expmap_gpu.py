"""Exponential-map keyframes on the GPU (real, or numba's simulator with tiny sizes): keyframes
drawn on the GPU agree with the CPU twin's, and the assembly kernel gives the twin's values and
colours."""
import numpy as np
import pytest

pytestmark = pytest.mark.gpu
pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

from kernels.mandelbrot.keyframes.expmap import expmap_of, width_log2
from kernels.mandelbrot.keyframes.expmap_assemble import Assembler
from kernels.mandelbrot.keyframes.expmap_render import KeyframeRenderer, pinned_orbit
from kernels.mandelbrot.keyframes.zoom_path import zoom_in


def _size(simulated):
    return (8, 6) if simulated else (192, 108)


def test_gpu_keyframes_match_the_cpu_twin(gpu_backend, cpu_backend, simulated):
    path = zoom_in("-0.7436438870371587", "0.1318259042053119", "1e-300", None, 30)
    em = expmap_of(path, _size(simulated))
    picks = (0, em.count // 2, em.count - 1)       # float64-deep, perturbation, extended depths
    gpu, cpu = KeyframeRenderer(gpu_backend), KeyframeRenderer(cpu_backend)
    with pinned_orbit(em):
        for k in picks:
            a, b = gpu.render(em, k), cpu.render(em, k)
            # exp, cos and sin may round an ulp apart (step_helpers): a count, not the bit
            agree = np.mean(np.abs(np.floor(a) - np.floor(b)) <= 1)
            assert agree >= 0.98, (k, agree)


def test_gpu_assembly_matches_the_cpu_twin(gpu_backend, cpu_backend, simulated):
    from types import SimpleNamespace
    path = zoom_in("0.3", "-0.5", "1e-5", None, 30)
    em = expmap_of(path, _size(simulated))
    rng = np.random.default_rng(3)
    keys = {k: rng.uniform(2.0, 40.0, em.samples) for k in range(em.count)}
    for k in keys:
        keys[k][rng.random(em.samples) < 0.1] = 1e6      # some inside
    from kernels import palettes
    spec = SimpleNamespace(palette=palettes.DEFAULT, density=1.0, offset=0.0, interior=(0, 0, 0, 255),
                           mapping="sqrt")
    out = {}
    for be in (gpu_backend, cpu_backend):
        asm = Assembler(be, em, em.count)
        for k, v in keys.items():
            asm.load(k, v)
        lw = width_log2(path.frame(17).width)
        first, last = em.needs(lw)
        values = asm.values(lw, 500, first, last)
        values = values if isinstance(values, np.ndarray) else values.copy_to_host()
        out[be.name] = (values.copy(), asm.frame(spec, lw, 500, first, last).copy())
    (vg, rg), (vc, rc) = out[gpu_backend.name], out[cpu_backend.name]
    assert np.allclose(vg, vc, rtol=1e-12, atol=1e-9)
    assert np.abs(rg.astype(int) - rc.astype(int)).max() <= 1


def test_frames_in_lent_arrays_are_the_frames_of_the_ring(gpu_backend, simulated):
    """Assembler.frames with a lender (a GPU's frames copied straight into lent pinned arrays, the
    next frame queued before each is taken) gives frame() for frame()."""
    from types import SimpleNamespace

    from kernels import palettes
    from kernels.lent_arrays import Lender
    path = zoom_in("0.3", "-0.5", "1e-5", None, 30)
    em = expmap_of(path, _size(simulated))
    rng = np.random.default_rng(5)
    spec = SimpleNamespace(palette=palettes.DEFAULT, density=1.0, offset=0.0,
                           interior=(0, 0, 0, 255), mapping="sqrt")
    asm = Assembler(gpu_backend, em, em.count)
    for k in range(em.count):
        asm.load(k, rng.uniform(2.0, 40.0, em.samples))
    picks = []
    for f in (3, 9, 17, 25):
        lw = width_log2(path.frame(f).width)
        picks.append((lw, 500) + tuple(em.needs(lw)))
    ring = [asm.frame(spec, *p).copy() for p in picks]
    lender = Lender()
    lent = list(asm.frames(spec, picks, lender=lender))
    assert len({id(a) for a in lent}) == len(lent)      # each frame its own array
    for a, b in zip(lent, ring):
        assert np.array_equal(a, b)
    lender.give(lent[0])
    assert lender.take(lent[0].shape, lent[0].dtype, pinned=not simulated) is lent[0]


def test_keyframes_drawn_beside_their_frames_go_to_the_assembler_on_the_device(
        gpu_backend, simulated, tmp_path, monkeypatch):
    """A keyframe a GPU worker draws once its assembler exists is copied into it on the device
    (Assembler.load_device), not loaded from the host again: the slot holds the keyframe's values
    as the host receives them, and the movie's frames all come."""
    from kernels.mandelbrot.keyframes import expmap_assemble
    from kernels.mandelbrot.keyframes.expmap_render import pinned_orbit
    from kernels.spread import open_pool
    from services import movie_keyframes as mk
    from services.movie import MovieSpec, prepare
    monkeypatch.setattr(mk, "BATCH_FRAMES", 2)          # later batches' keyframes drawn among frames
    monkeypatch.setattr(mk, "CHUNK_FRAMES", 1)
    monkeypatch.setattr(mk, "DIRECT_MIN_LOG2", float("inf"))      # every frame from keyframes
    size = (6, 4) if simulated else (96, 54)
    spec = MovieSpec(out=str(tmp_path / "f%03d.png"), size=size, fps=3, seconds=1,
                     center="-0.7436438870371587,0.1318259042053119", width="2e-1",
                     colouring=(("mapping", "sqrt"),), keyframes=True)
    movie = prepare(spec, open_encoder=False)
    em = mk.keyframe_map(movie)
    real = expmap_assemble.Assembler.load_device
    copied = {}

    def load_device(self, k, values, stream):
        done = real(self, k, values, stream)
        if done:
            stream.synchronize()
            copied[k] = np.array_equal(self.stack[int(self.slot_of[k])].copy_to_host(),
                                       values.copy_to_host())
        return done
    monkeypatch.setattr(expmap_assemble.Assembler, "load_device", load_device)
    with open_pool(gpu_backend) as pool, pinned_orbit(em):
        files = mk.KeyframeFiles(tmp_path / "k", em)
        made = [e[1] for e in mk.keyframe_frames(movie, em, list(range(movie.frames)), pool, files)
                if e[0] == "frame"]
        files.close()
    assert sorted(made) == list(range(movie.frames))
    assert copied and all(copied.values()), copied
