"""`--location FILE` through main: a Kalles Fraktaler .kfr file or our location text renders as
the same --center/--width/--iters would (KF's Zoom through the picture's aspect), a movie zooms to
it, the bench benches it; KF's six shipped benchmark locations are workloads; conflicts and bad
files (malformed, huge, binary, absurd iterations, missing, a folder) are one line and status 2."""
from __future__ import annotations

import json
from decimal import Decimal

import numpy as np
import pytest

import main
from cli import bench as cli_bench
from kernels.backend import resolve
from services import kf_bench
from services.location_file import MAX_LOCATION_FILE_BYTES
from services.shipped_data import shipped_file

pytest.importorskip("gmpy2", reason="deep zoom needs gmpy2")

KF_1E14 = shipped_file("kf-1e14.kfr")
# our own location text: a deep place a few hundred iterations deep (quick on the CPU)
OURS = "center=-1.7498005,0.00000123 width=2.5e-15 iters=400\n"


def render(out, *extra, size="16x12"):
    return main.main(["--render", "mandelbrot", "--backend", "cpu", "--size", size,
                      "--out", str(out), *extra])


def kfr_fields(path):
    text = open(path, encoding="ascii").read()
    return {line.split(":")[0]: line.split(":", 1)[1].strip() for line in text.splitlines()}


def test_a_kfr_file_renders_as_its_centre_width_and_iterations(tmp_path, capsys):
    f = kfr_fields(KF_1E14)
    assert render(tmp_path / "loc.npy", "--location", KF_1E14) == 0, capsys.readouterr().err
    # KF's Zoom fixes the height: 4/Zoom tall, so 16x12 pixels are 4/Zoom * 16/12 wide
    width = Decimal(4) / Decimal(f["Zoom"]) * 16 / 12
    assert render(tmp_path / "opt.npy", "--center", f"{f['Re']},{f['Im']}", "--width",
                  str(width), "--iters", f["Iterations"]) == 0
    a, b = np.load(tmp_path / "loc.npy"), np.load(tmp_path / "opt.npy")
    assert a.shape == (12, 16) and np.array_equal(a, b)
    assert a.max() - a.min() > 10          # structure, not one flat count
    # --iters overrides the file's count: fewer iterations, more pixels left inside
    assert render(tmp_path / "few.npy", "--location", KF_1E14, "--iters", "600") == 0
    assert not np.array_equal(np.load(tmp_path / "few.npy"), a)


def test_our_location_text_renders_as_the_same_options(tmp_path, capsys):
    path = tmp_path / "place.txt"
    path.write_text(OURS)
    assert render(tmp_path / "loc.png", "--location", str(path)) == 0, capsys.readouterr().err
    assert render(tmp_path / "opt.png", "--center", "-1.7498005,0.00000123", "--width", "2.5e-15",
                  "--iters", "400") == 0
    assert (tmp_path / "loc.png").read_bytes() == (tmp_path / "opt.png").read_bytes()


def test_a_movie_zooms_to_the_location(tmp_path, capsys):
    from PIL import Image
    path = tmp_path / "place.txt"
    path.write_text(OURS)
    pattern = tmp_path / "frames" / "f%02d.png"
    pattern.parent.mkdir()
    code = main.main(["--movie", str(pattern), "--backend", "cpu", "--size", "16x12", "--fps",
                      "2", "--seconds", "1", "--location", str(path)])
    assert code == 0, capsys.readouterr().err
    assert render(tmp_path / "end.png", "--location", str(path), "--mapping", "sqrt") == 0
    last = np.asarray(Image.open(str(pattern) % 1))
    assert np.array_equal(last, np.asarray(Image.open(tmp_path / "end.png")))
    assert not np.array_equal(last, np.asarray(Image.open(str(pattern) % 0)))


def test_the_bench_benches_the_location(tmp_path, capsys, monkeypatch):
    from kernels.mandelbrot.benches import place_bench
    monkeypatch.setattr(place_bench, "CPU_SIZE", (24, 24))     # the method, not the speed
    path = tmp_path / "place.txt"
    path.write_text(OURS)
    out = tmp_path / "b.json"
    assert main.main(["--bench", "--backend", "cpu", "--location", str(path), "--repeats", "1",
                      "--json", str(out)]) == 0, capsys.readouterr().err
    rows = json.loads(out.read_text())["results"]
    assert [r["variant"] for r in rows] == ["first frame", "re-render"]
    assert {r["workload"] for r in rows} == {"location-place"}
    first = rows[0]
    assert first["metrics"]["max_iter"] == 400 and first["metrics"]["reused"] is False
    assert first["metrics"]["reference ms"] > 0 and first["phases_ms"]["kernel"] > 0
    assert Decimal(first["metrics"]["width"]) == Decimal("2.5e-15")


def test_kfs_six_locations_are_workloads_read_from_the_shipped_files():
    names = {w.name: w for w in kf_bench.kf_workloads()}
    assert sorted(names) == sorted(f"deep-kf-{x}" for x in
                                   ("1e14", "1e50", "5e113", "5e227", "4e533", "1e1086"))
    cpu = resolve("cpu")
    # the CPU twin takes minutes: it runs only when named
    assert not [w for w in cli_bench.select(names.values(), cpu, None)]
    assert len(cli_bench.select(names.values(), cpu, "deep-kf")) == 6
    assert "1,200,000 iterations" in names["deep-kf-5e227"].description
    assert "Olbaid-ST" in names["deep-kf-1e1086"].description


def test_a_kf_workload_renders_its_file(monkeypatch):
    from kernels.mandelbrot.benches import place_bench
    monkeypatch.setattr(place_bench, "CPU_SIZE", (16, 16))
    (w,) = [w for w in kf_bench.kf_workloads() if w.name == "deep-kf-1e14"]
    rows = w.run(resolve("cpu"), 1)
    first = rows[0]
    assert first["variant"] == "first frame" and first["size"] == "16x16"
    assert first["metrics"]["max_iter"] == 4036 and first["metrics"]["KF s"] == 7.56
    assert Decimal(first["metrics"]["width"]) == Decimal(4) / Decimal("1e14")
    assert first["metrics"]["steps/px"] > 0


CONFLICTS = [
    (["--render", "mandelbrot", "--center", "0,0"], "leave out --center"),
    (["--render", "mandelbrot", "--width", "1e-3"], "leave out --width"),
    (["--render", "distance"], "--location applies to --render mandelbrot"),
    (["--bench", "--only", "deep-kf"], "leave out --only"),
    (["--movie", "{tmp}/m.mp4", "--center", "0,0"], "leave out --center"),
]


@pytest.mark.parametrize("argv, words", CONFLICTS)
def test_conflicts_are_one_line_and_status_2(tmp_path, capsys, argv, words):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if argv[0] == "--render":
        argv += ["--out", str(tmp_path / "x.png")]
    assert main.main([*argv, "--backend", "cpu", "--location", KF_1E14]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_location_is_refused_where_it_means_nothing(capsys):
    assert main.main(["--location", KF_1E14, "--bench", "--ui"]) == 2
    assert "--location does not apply" in capsys.readouterr().err


BAD_FILES = [
    ("malformed", b"Re: -0.75\r\nIm: 0\r\n", "no Zoom line"),
    ("malformed ours", b"center=-0.75 width=1e-20", "centre needs two numbers"),
    ("no place at all", b"hello\n", "no centre found"),
    ("not a number", b"Re: -0.75\r\nIm: zero\r\nZoom: 1e20\r\n", "must be a number"),
    ("huge", b"Re: 0\r\n" + b"x" * (MAX_LOCATION_FILE_BYTES + 10), "a location file is far smaller"),
    ("binary", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a text file"),
    ("latin-1", "Re: -0.75\r\nIm: 0\r\nZoom: 1e20\r\nName: \u00e9t\u00e9\r\n".encode("latin-1"),
     "not UTF-8"),
    ("absurd iterations", b"Re: -0.75\r\nIm: 0.1\r\nZoom: 1e20\r\nIterations: 1e999999999\r\n",
     "from 1 to 10,000,000"),
    ("too many iterations", b"Re: -0.75\r\nIm: 0.1\r\nZoom: 1e20\r\nIterations: 20000000\r\n",
     "from 1 to 10,000,000"),
    ("absurd zoom", b"Re: -0.75\r\nIm: 0.1\r\nZoom: 1e99999\r\n", "out of range"),
    ("empty", b"", "empty"),
]
MODES = {"render": ["--render", "mandelbrot", "--out", "{tmp}/x.png"],
         "movie": ["--movie", "{tmp}/f%02d.png", "--fps", "2", "--seconds", "1"],
         "bench": ["--bench"]}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("case, data, words", BAD_FILES, ids=[c[0] for c in BAD_FILES])
def test_a_bad_location_file_is_one_line_and_status_2(tmp_path, capsys, mode, case, data, words):
    path = tmp_path / ("bad.txt" if case in ("malformed ours", "no place at all") else "bad.kfr")
    path.write_bytes(data)
    argv = [a.replace("{tmp}", str(tmp_path)) for a in MODES[mode]]
    size = [] if mode == "bench" else ["--size", "16x12"]
    assert main.main([*argv, "--backend", "cpu", *size, "--location", str(path)]) == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("main.py: error: --location")
    assert not (tmp_path / "x.png").exists()


@pytest.mark.parametrize("what", ["missing", "folder"])
def test_a_missing_file_or_a_folder_is_one_line_and_status_2(tmp_path, capsys, what):
    path = tmp_path / ("nothing.kfr" if what == "missing" else "")
    assert render(tmp_path / "x.png", "--location", str(path)) == 2
    err = capsys.readouterr().err
    assert ("No such file" in err if what == "missing" else "is a folder" in err), err
    assert len(err.strip().splitlines()) == 1


def test_reopening_a_location_from_the_command_line_reads_its_reference_from_disk(
        tmp_path, capsys, monkeypatch):
    from kernels.mandelbrot.reference import reference as reference_module
    from kernels.mandelbrot.reference import reference_store
    monkeypatch.setenv("GPU_EXPLORER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(reference_store, "_shared", None)        # a new start of the app
    monkeypatch.setattr(reference_store, "SAVE_MS", 0.0)          # even a quick orbit is kept
    runs = []
    plain = reference_module.ReferenceOrbit.extend

    def extend(self, *a, **k):
        before = self.version
        out = plain(self, *a, **k)
        runs.append(self.version != before)
        return out
    monkeypatch.setattr(reference_module.ReferenceOrbit, "extend", extend)
    assert render(tmp_path / "a.npy", "--location", KF_1E14) == 0, capsys.readouterr().err
    assert any(runs) and len(list((tmp_path / "cache" / "references").iterdir())) == 1
    runs.clear()
    monkeypatch.setattr(reference_store, "_shared", None)
    assert render(tmp_path / "b.npy", "--location", KF_1E14) == 0
    assert not any(runs)                                         # loaded, not computed
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))
    monkeypatch.setattr(reference_store, "_shared", None)
