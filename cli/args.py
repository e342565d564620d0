"""The command line's grammar: the parser of main.py, `--size WxH`, negative numbers after
`--center`-like options, and which options need a headless mode.

Parsing errors print one line (not the whole usage) naming the valid choices and exit with status 2.
"""
from __future__ import annotations

import argparse

from .failures import PROG, USAGE
from .requests import RENDER_VIEWS
from .views import VIEW_IDS

# every --render view option, in the order the views list them (a view rejects the others')
VIEW_OPTIONS = tuple(dict.fromkeys(opt for options, _ in RENDER_VIEWS.values() for opt in options))
# options whose value may start with '-' (a negative number)
VALUE_OPTIONS = ("--center", "--ref", "--bounds", "--width")
# options that mean nothing in window mode
HEADLESS_ONLY = ("out", "only", "json")


class ArgParser(argparse.ArgumentParser):
    def error(self, message):
        # one line, not the whole usage: the message already names the valid choices
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> ArgParser:
    p = ArgParser(prog=PROG, description="GPU Explorer: GPU computing made visible.")
    p.add_argument("--backend", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to compute (default auto: the GPU when usable, else the CPU)")
    p.add_argument("--view", choices=VIEW_IDS, default=None, help="view to open first (window mode)")
    g = p.add_argument_group("headless rendering")
    g.add_argument("--render", choices=tuple(RENDER_VIEWS), metavar="VIEW",
                   help=f"render one frame of VIEW ({'|'.join(RENDER_VIEWS)}) without a window")
    g.add_argument("--out", metavar="FILE", help="FILE.png (colours) or FILE.npy (raw float64 values)")
    g.add_argument("--size", default="1920x1080", metavar="WxH", help="picture size (default 1920x1080)")
    g.add_argument("--center", metavar="X,Y", help="mandelbrot: centre of the view")
    g.add_argument("--width", metavar="W", help="mandelbrot: width of the view on the real axis")
    g.add_argument("--iters", metavar="N", help="mandelbrot: iteration limit (default: from the depth)")
    g.add_argument("--palette", metavar="NAME", help="colour map name (e.g. inferno, viridis)")
    g.add_argument("--bounds", metavar="LAT0,LAT1,LON0,LON1", help="distance: grid bounds in degrees")
    g.add_argument("--ref", metavar="LAT,LON", help="distance: reference point")
    g.add_argument("--unit", metavar="km|nm|mi", help="distance: unit")
    g.add_argument("--strategy", metavar="host-mesh|broadcast|device-mesh", help="distance: GPU strategy")
    b = p.add_argument_group("benchmarks")
    b.add_argument("--bench", action="store_true", help="run the registered workloads, print a table")
    b.add_argument("--only", metavar="NAME", help="only the workload NAME (or names starting with it)")
    b.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    b.add_argument("--repeats", type=int, default=20, metavar="N", help="timed runs per case (default 20)")
    b.add_argument("--ui", action="store_true", help="frame-rate bench of the real window (offscreen Qt)")
    b.add_argument("--seconds", type=float, default=5.0, help="duration of the --ui bench (default 5)")
    return p


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse main.py's arguments; a mistake exits with status 2 and one line."""
    return build_parser().parse_args(join_negative_values(list(argv)))


def join_negative_values(argv: list[str]) -> list[str]:
    """argparse takes '--center -0.75,0.1' for two options; users should not have to write '='."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in VALUE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and argv[i + 1][1:2] in "0123456789.":
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def parse_size(text: str) -> tuple[int, int]:
    """'1920x1080' -> (1920, 1080); ValueError with a one-line message otherwise."""
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must look like 1920x1080, not {text!r}") from None
    if w < 1 or h < 1 or w * h > 2**31:
        raise ValueError(f"--size {text}: both sides must be at least 1 and the area at most 2^31 pixels")
    return w, h


def window_mode_error(args: argparse.Namespace) -> str | None:
    """The one-line complaint when a headless-only option is given without --render/--bench."""
    given = [k for k in VIEW_OPTIONS if getattr(args, k) is not None]
    given += [k for k in HEADLESS_ONLY if getattr(args, k) is not None]
    if args.ui:
        given.append("ui")
    if given:
        return f"--{given[0]} applies only with --render or --bench"
    return None
