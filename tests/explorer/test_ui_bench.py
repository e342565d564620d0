"""The window frame-rate bench: it runs, counts displayed frames and reports per-frame medians.
(Speed targets are checked by running it on the GPU machine, never asserted here.)"""
import pytest

from explorer.ui_bench import run_ui_bench


def check_report(r, backend, size):
    assert set(r) >= {"frames", "fps", "per_frame_ms", "backend", "size"}
    assert r["backend"] == backend and r["size"] == size
    assert r["frames"] >= r["min_frames"] and r["fps"] > 0
    assert set(r["per_frame_ms"]) == {"compute", "copy", "display"}
    assert r["per_frame_ms"]["display"] > 0


def test_ui_bench_on_the_cpu(qapp):
    r = run_ui_bench("cpu", seconds=0.3, size=(64, 48), iterations=30, min_frames=3)
    check_report(r, "cpu", "64x48")
    assert r["per_frame_ms"]["compute"] > 0
    assert r["per_frame_ms"]["copy"] is None        # the CPU copies nothing across a bus


def test_ui_bench_refuses_an_unknown_backend(qapp):
    with pytest.raises(ValueError, match="cpu"):
        run_ui_bench("tpu", seconds=0.1, size=(32, 24))


@pytest.mark.gpu
def test_ui_bench_on_the_gpu(qapp, gpu_backend, simulated):
    size = (16, 12) if simulated else (320, 240)
    # the simulator may need longer than `seconds` for one frame: the bench still measures
    # min_frames frames (it used to end with none, now and then)
    r = run_ui_bench("cuda", seconds=0.3, size=size, iterations=20 if simulated else 200, min_frames=3)
    check_report(r, "cuda", f"{size[0]}x{size[1]}")
    if simulated:       # no CUDA events in the simulator: GPU phases are not invented
        assert r["per_frame_ms"]["compute"] is None and r["per_frame_ms"]["copy"] is None
    else:
        assert r["per_frame_ms"]["compute"] > 0 and r["per_frame_ms"]["copy"] > 0
