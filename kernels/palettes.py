"""Colour palettes as lookup tables (N×4 uint8 RGBA), shared by every view's colouring kernel.

The colour data is pyqtgraph's own colour-map files (matplotlib's and CET's maps), read from the
installed package's data folder without importing pyqtgraph, which would load Qt.
"""
from __future__ import annotations

import functools
import importlib.util
import os

import numpy as np

# shown first in pickers; any other map file pyqtgraph ships is also accepted by name
FEATURED = ("inferno", "viridis", "magma", "plasma", "cividis", "turbo", "CET-C6", "CET-L8", "CET-R3",
            "CET-L17", "CET-D1")
DEFAULT = "inferno"


def _maps_dir() -> str | None:
    spec = importlib.util.find_spec("pyqtgraph")
    if spec is None or not spec.submodule_search_locations:
        return None
    d = os.path.join(list(spec.submodule_search_locations)[0], "colors", "maps")
    return d if os.path.isdir(d) else None


def names() -> list[str]:
    d = _maps_dir()
    have = set()
    if d:
        have = {f[:-4] for f in os.listdir(d) if f.endswith(".csv")}
    featured = [n for n in FEATURED if n in have]
    return featured + sorted(have - set(featured)) if have else ["grey"]


def _read_csv(path: str) -> np.ndarray:
    rows = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith(";"):
                continue
            rows.append([float(v) for v in line.split(",")[:3]])
    return np.asarray(rows, dtype=np.float64)


@functools.lru_cache(maxsize=64)
def _control_points(name: str) -> np.ndarray:
    if name == "grey":
        return np.array([[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    d = _maps_dir()
    path = os.path.join(d, name + ".csv") if d else None
    if not path or not os.path.isfile(path):
        raise ValueError(f"unknown palette {name!r}; choose one of: {', '.join(names()[:12])}, …")
    pts = _read_csv(path)
    if pts.max() > 1.0:
        pts = pts / 255.0
    return pts


@functools.lru_cache(maxsize=64)
def lut(name: str = DEFAULT, n: int = 1024) -> np.ndarray:
    """An (n, 4) uint8 RGBA table interpolated from the named map; alpha 255. Read-only."""
    pts = _control_points(name)
    x = np.linspace(0.0, 1.0, len(pts))
    xi = np.linspace(0.0, 1.0, n)
    out = np.empty((n, 4), dtype=np.uint8)
    for c in range(3):
        out[:, c] = np.clip(np.round(np.interp(xi, x, pts[:, c]) * 255.0), 0, 255)
    out[:, 3] = 255
    out.flags.writeable = False
    return out
