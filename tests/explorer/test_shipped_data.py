"""The shipped data files (top-level resources/) are found in the checkout; the wheel carries them."""
import fnmatch
import os
import pathlib
import tomllib

from explorer import shipped_data
from explorer.views import distance_map, mandelbrot_controls

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_bookmarks_and_coastline_come_from_the_loader():
    assert mandelbrot_controls.BOOKMARKS_PATH == shipped_data.shipped_file("bookmarks.json")
    assert str(distance_map.COASTLINE_PATH) == shipped_data.shipped_file("ne_110m_coastline.geojson")
    bookmarks, problems = mandelbrot_controls.load_bookmarks()
    assert bookmarks and not problems
    lons, lats, problems = distance_map.load_coastline(str(distance_map.COASTLINE_PATH))
    assert len(lons) > 1000 and not problems


def test_every_shipped_file_is_package_data():
    # a file added to resources/ without a pattern in pyproject.toml would be missing from the
    # wheel, though the tests (run from the checkout) would still find it
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    package = f"explorer.{shipped_data.FOLDER}"
    assert cfg["package-dir"][package] == shipped_data.FOLDER
    patterns = cfg["package-data"][package]
    folder = pathlib.Path(shipped_data.shipped_file("x")).parent
    assert folder == ROOT / shipped_data.FOLDER
    files = sorted(os.listdir(folder))
    assert files
    for name in files:
        assert any(fnmatch.fnmatch(name, p) for p in patterns), name


def test_no_code_looks_for_data_beside_the_repository():
    offenders = []
    for path in [ROOT / "main.py", *ROOT.glob("explorer/**/*.py"), *ROOT.glob("kernels/**/*.py"),
                 *ROOT.glob("cli/**/*.py")]:
        if path.name != "shipped_data.py" and '"resources"' in path.read_text(encoding="utf-8"):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
