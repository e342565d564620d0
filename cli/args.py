"""The command line's grammar: the parser of main.py, its value checks (`--size WxH`, `--seconds`,
`--repeats`, the named choices), values that start with '-' (a negative number), and which
options each mode takes.

main.py runs in one of five modes: the window (no mode option), --render, --movie, --bench and
--bench --ui. An option that means nothing in the chosen mode is refused (`mode_error`), as is
every bad value, with one line and exit status 2, before any work starts. Lists of choices read
the same everywhere: "choose one of: a, b, c".
"""
from __future__ import annotations

import argparse
import math
import os
import re

from kernels.distance.request import STRATEGIES, UNITS
from kernels.mandelbrot.requests.formulas import EQUATIONS, FORMULAS
from kernels.mandelbrot.requests.number_type import NUMBER_TYPES
from kernels.mandelbrot.requests.request import MAPPINGS

from services.movie import DEFAULT_FPS, DEFAULT_MOVIE_SECONDS, MAX_FPS
from services.requests import MANDELBROT_OPTIONS, RENDER_VIEWS
from services.views import VIEW_IDS

from .failures import PROG, USAGE
from .overlay_output import overlay_value

BACKENDS = ("auto", "cpu", "cuda")
# every --render view option, in the order the views list them (a view rejects the others')
VIEW_OPTIONS = tuple(dict.fromkeys(opt for options, _ in RENDER_VIEWS.values() for opt in options))
DEFAULT_REPEATS = 20
DEFAULT_SECONDS = 5.0
MAX_SECONDS = 3600.0
MAX_REPEATS = 100_000
ZOOMS = ("in", "out")

WINDOW, RENDER, BENCH, WINDOW_BENCH = "window", "render", "bench", "bench-ui"
MOVIE, SERVE = "movie", "serve"
# how a message names a mode: "does not apply when opening the window", "… only with --render"
MODE_NAMES = {WINDOW: "when opening the window", RENDER: "with --render", BENCH: "with --bench",
              WINDOW_BENCH: "with --bench --ui", MOVIE: "with --movie", SERVE: "with --serve"}
# the modes each option applies to (--backend applies to all of them)
OPTION_MODES = {
    "view": (WINDOW,),
    "out": (RENDER,),
    "size": (RENDER, WINDOW_BENCH, MOVIE),
    **{opt: (RENDER, MOVIE) if opt in MANDELBROT_OPTIONS else (RENDER,) for opt in VIEW_OPTIONS},
    "location": (RENDER, MOVIE, BENCH),
    "newton": (RENDER, MOVIE),
    "exact_pixels": (RENDER,),
    "proved_pixels": (RENDER,),
    "marked_pixels": (RENDER,),
    "overlay": (RENDER,),
    "gpus": (RENDER, MOVIE),
    "scheduler": (RENDER, MOVIE),
    "fps": (MOVIE,),
    "codec": (MOVIE,),
    "zoom": (MOVIE,),
    "restart": (MOVIE,),
    "keyframes": (MOVIE,),
    "keyframes_out": (MOVIE,),
    "oversample": (MOVIE,),
    "only": (BENCH,),
    "json": (BENCH, WINDOW_BENCH),
    "repeats": (BENCH,),
    "ui": (BENCH, WINDOW_BENCH),
    "seconds": (WINDOW_BENCH, MOVIE),
    "number_type": (RENDER, BENCH),
    "no_server": (RENDER,),
    "idle_minutes": (SERVE,),
}


class ArgParser(argparse.ArgumentParser):
    def error(self, message):
        # one line, not the whole usage: the message already names the valid choices
        m = re.match(r"argument (--[\w-]+)(?:/\S+)?: (.*)", message, re.DOTALL)
        if m:        # "argument --size: --size must look like…" says the option once
            option, rest = m.groups()
            message = rest if rest.startswith(option) else f"{option}: {rest}"
        self.exit(USAGE, f"{self.prog}: error: {message}\n")


def one_of(option: str, choices) -> callable:
    """An argparse type that accepts only `choices`, refusing others in the shared wording."""
    choices = tuple(choices)

    def check(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"{option} {text!r} is unknown; choose one of: "
                                              f"{', '.join(choices)}")
        return text
    return check


def oversample_value(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = float("nan")
    if not 0.25 <= v <= 4.0:
        raise argparse.ArgumentTypeError(f"--oversample must be a number from 0.25 to 4, "
                                         f"not {text!r}")
    return v


def seconds_value(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = math.nan
    if not (math.isfinite(v) and 0 < v <= MAX_SECONDS):
        raise argparse.ArgumentTypeError(f"--seconds must be a number above 0 and at most "
                                          f"{MAX_SECONDS:g}, such as 5; got {text!r}")
    return v


def fps_value(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= MAX_FPS:
        raise argparse.ArgumentTypeError(f"--fps must be a whole number from 1 to {MAX_FPS}, such "
                                          f"as 60; got {text!r}")
    return v


def repeats_value(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if not 1 <= v <= MAX_REPEATS:
        raise argparse.ArgumentTypeError(f"--repeats must be a whole number from 1 to "
                                          f"{MAX_REPEATS:,}, such as 20; got {text!r}")
    return v


def size_value(text: str) -> tuple[int, int]:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def palette_value(text: str) -> str:
    """A palette the app has; an unknown one is refused with every name there is (69 of them:
    a shortened list left the user guessing)."""
    from kernels import palettes
    try:
        palettes.lut(text, 2)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--palette {text!r} is unknown; choose one of: "
                                          f"{', '.join(palettes.names())}") from None
    return text


def gpus_value(text: str) -> str:
    """--gpus all or GPU numbers; an empty value is refused rather than taken as no --gpus."""
    if not text.strip():
        raise argparse.ArgumentTypeError("--gpus needs a value: all, or GPU numbers such as 0,1")
    return text


def build_parser() -> ArgParser:
    p = ArgParser(prog=PROG, description="GPU Explorer: GPU computing made visible.")
    p.add_argument("--backend", choices=BACKENDS, type=one_of("--backend", BACKENDS), default="auto",
                   help="where to compute (default auto: the GPU when usable, else the CPU)")
    p.add_argument("--view", choices=VIEW_IDS, type=one_of("--view", VIEW_IDS), default=None,
                   help="view to open first (window mode)")
    g = p.add_argument_group("headless rendering")
    g.add_argument("--render", choices=tuple(RENDER_VIEWS), type=one_of("--render", RENDER_VIEWS),
                   metavar="VIEW",
                   help=f"render one frame of VIEW ({'|'.join(RENDER_VIEWS)}) without a window")
    g.add_argument("--out", metavar="FILE", help="FILE.png (colours) or FILE.npy (raw float64 values)")
    g.add_argument("--size", type=size_value, default=None, metavar="WxH",
                   help="picture size (default 1920x1080; --bench --ui: 1920x1080 on a GPU, "
                        "960x540 on the CPU)")
    g.add_argument("--center", metavar="X,Y", help="mandelbrot: centre of the view")
    g.add_argument("--width", metavar="W", help="mandelbrot: width of the view on the real axis")
    g.add_argument("--location", metavar="FILE",
                   help="mandelbrot: the place in FILE, a Kalles Fraktaler .kfr file or our "
                        "location text (center=X,Y width=W iters=N): its centre, its width (KF's "
                        "Zoom through the picture's aspect) and its iterations (--iters overrides "
                        "them); --movie zooms to it, --bench benches it")
    g.add_argument("--iters", metavar="N", help="mandelbrot: iteration limit (default: from the depth)")
    g.add_argument("--palette", type=palette_value, metavar="NAME",
                   help="colour map name (e.g. inferno, viridis)")
    g.add_argument("--mapping", type=one_of("--mapping", MAPPINGS), metavar="|".join(MAPPINGS),
                   help="mandelbrot: escape count → palette (default: sqrt for float64 frames, log "
                        "for deep ones; a --movie uses one mapping for every frame, sqrt unless given)")
    g.add_argument("--formula", type=one_of("--formula", FORMULAS), metavar="|".join(FORMULAS),
                   help="mandelbrot: the formula iterated: " + ", ".join(
                       f"{name} ({EQUATIONS[name]})" for name in FORMULAS)
                   + "; default mandelbrot, or a --location file's (KF's FractalType)")
    g.add_argument("--newton", action="store_true", default=None,
                   help="mandelbrot: first move to the minibrot in the view of --center/--width "
                        "(its nucleus by Newton's method) and show it; prints its period")
    g.add_argument("--exact-pixels", action="store_true", default=None,
                   help="mandelbrot, deep frames: the pixels float64 deltas cannot place are "
                        "iterated on every core in double-double with a sound bound (the "
                        "default), then in MPFR where that cannot prove them (exact; minutes at "
                        "the hardest places)")
    g.add_argument("--proved-pixels", action="store_true", default=None,
                   help="mandelbrot, deep frames (the default): the pixels float64 deltas cannot "
                        "place are iterated in double-double (seconds at the hardest places); "
                        "those it cannot prove keep the loop's value and are marked (counted in "
                        "a note, 2 in the redone overlay)")
    g.add_argument("--marked-pixels", action="store_true", default=None,
                   help="mandelbrot, deep frames: the fastest render: the pixels float64 deltas "
                        "cannot place keep the loop's value and are all marked (none iterated "
                        "again; up to ~3 %% of KF's hardest places)")
    g.add_argument("--overlay", type=overlay_value, metavar="NAME[,NAME]",
                   help="mandelbrot: also write these per-pixel overlays as FILE.NAME.npy beside "
                        "--out: iterations, lane-efficiency (GPU), bla-steps, perturbation-steps, "
                        "rebases, redone (deep frames)")
    g.add_argument("--bounds", metavar="LAT0,LAT1,LON0,LON1",
                   help="distance: grid bounds in degrees (longitudes within ±540, spanning at most 360)")
    g.add_argument("--ref", metavar="LAT,LON",
                   help="distance: reference point (the longitude wraps to [-180, 180))")
    g.add_argument("--unit", type=one_of("--unit", UNITS), metavar="|".join(UNITS), help="distance: unit")
    g.add_argument("--strategy", type=one_of("--strategy", STRATEGIES), metavar="|".join(STRATEGIES),
                   help="distance: GPU strategy")
    s = p.add_argument_group("posters and movies over several GPUs or a cluster")
    s.add_argument("--gpus", type=gpus_value, metavar="all|0,1",
                   help="render in bands on these GPUs (all, or numbers such as 0,1), one worker "
                        "per GPU; the picture resumes after an interruption")
    s.add_argument("--scheduler", metavar="local|ADDRESS",
                   help="send the bands to Dask: local (a cluster on this machine, one worker per "
                        "GPU) or a scheduler's address such as tcp://host:8786 (needs the "
                        "cluster extra). Dask moves pickles: a scheduler address is trusted like "
                        "code you run, so name only a cluster you control")
    m = p.add_argument_group("zoom movies")
    m.add_argument("--movie", metavar="OUT",
                   help="a zoom movie of --center/--width without a window: OUT.mp4|.mkv|.mov "
                        "(needs the movie extra: PyAV) or a PNG per frame, DIR/frame%%05d.png; it "
                        "resumes after an interruption")
    m.add_argument("--fps", type=fps_value, default=None, metavar="N",
                   help=f"movie frames per second (default {DEFAULT_FPS})")
    m.add_argument("--codec", metavar="NAME",
                   help="movie codec: h264 (libx264, the default), h265 (libx265), h264_nvenc, "
                        "hevc_nvenc (NVIDIA's encoder, where the GPU has one)")
    m.add_argument("--zoom", type=one_of("--zoom", ZOOMS), metavar="|".join(ZOOMS),
                   help="in: from the whole set to the location (the default); out: back out")
    m.add_argument("--restart", action="store_true",
                   help="start the movie afresh, discarding the finished parts of an earlier run")
    m.add_argument("--keyframes", action="store_true",
                   help="make the frames from exponential-map keyframes, one per octave of zoom "
                        "(cost follows depth, not length; frames are resampled, not each "
                        "rendered: off by default)")
    m.add_argument("--keyframes-out", metavar="DIR",
                   help="with --keyframes: keep every keyframe in DIR (.npy smooth counts and "
                        "keyframes.json, which says where each sample lies)")
    m.add_argument("--oversample", type=oversample_value, default=None, metavar="S",
                   help="with --keyframes: keyframe samples per frame pixel along each side "
                        "(default 1: as fine as the frame's pixels where they are coarsest)")
    p.add_argument("--number-type", type=one_of("--number-type", NUMBER_TYPES), default=None,
                   metavar="|".join(NUMBER_TYPES),
                   help="mandelbrot: the escape arithmetic of float64-depth frames (--render "
                        "default auto: float32 where it is exact enough and the GPU runs float64 "
                        "slowly; --bench default float64)")
    b = p.add_argument_group("benchmarks")
    b.add_argument("--bench", action="store_true", help="run the registered workloads, print a table")
    b.add_argument("--only", metavar="NAME", help="only the workload NAME (or names starting with it)")
    b.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    b.add_argument("--repeats", type=repeats_value, default=None, metavar="N",
                   help=f"timed runs per case (default {DEFAULT_REPEATS})")
    b.add_argument("--ui", action="store_true", help="frame-rate bench of the real window (offscreen Qt)")
    b.add_argument("--seconds", type=seconds_value, default=None, metavar="S",
                   help=f"duration of the --ui bench (default {DEFAULT_SECONDS:g}) or of the "
                        f"movie (default {DEFAULT_MOVIE_SECONDS:g})")
    s = p.add_argument_group("render server")
    s.add_argument("--serve", action="store_true",
                   help="keep numba, the GPU and its kernels ready in this process: later "
                        "--render commands of this user run here and cost their frame, not a "
                        "start (Linux, macOS)")
    s.add_argument("--idle-minutes", type=idle_value, default=None, metavar="M",
                   help="--serve stops after M minutes without a request (default 30)")
    s.add_argument("--no-server", action="store_true",
                   help="--render in its own process even when a render server runs")
    return p


def idle_value(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value:
        raise argparse.ArgumentTypeError(f"--idle-minutes must be a number of minutes above 0, "
                                         f"not {text!r}")
    return value


# options that name a file to write: "~" means the user's home there too, as in the dialogs
PATH_OPTIONS = ("out", "movie", "json", "keyframes_out")


def parse(argv: list[str]) -> argparse.Namespace:
    """Parse main.py's arguments; a mistake exits with status 2 and one line."""
    args = build_parser().parse_args(join_negative_values(list(argv)))
    for name in PATH_OPTIONS:
        value = getattr(args, name, None)
        if isinstance(value, str) and value.startswith("~"):
            setattr(args, name, os.path.expanduser(value))
    return args


# options that take a value, which may start with '-' (a negative number, '-5x10', '-inf')
VALUE_OPTIONS = ("--center", "--ref", "--bounds", "--width", "--size", "--seconds", "--repeats",
                 "--iters", "--fps")


def join_negative_values(argv: list[str]) -> list[str]:
    """argparse takes '--center -0.75,0.1' for two options, and says 'expected one argument';
    users should not have to write '='. A value after an option that needs one is kept with it
    when it starts with a single '-' (its checks then say what is wrong with it)."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in VALUE_OPTIONS and i + 1 < len(argv) and argv[i + 1].startswith("-") \
                and not argv[i + 1].startswith("--") and len(argv[i + 1]) > 1:
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


def mode(args: argparse.Namespace) -> str:
    if args.serve:
        return SERVE
    if args.movie:
        return MOVIE
    if args.render:
        return RENDER
    if args.bench:
        return WINDOW_BENCH if args.ui else BENCH
    return WINDOW


def mode_error(args: argparse.Namespace) -> str | None:
    """The one-line complaint about the first option given that the chosen mode does not take,
    or None when every option applies."""
    if args.render and args.bench:
        return "--render and --bench cannot be combined; choose one of them"
    if args.serve and (args.render or args.bench or args.movie):
        other = "--render" if args.render else "--bench" if args.bench else "--movie"
        return f"--serve and {other} cannot be combined; start the server, then run {other}"
    if args.movie and (args.render or args.bench):
        return (f"--movie and {'--render' if args.render else '--bench'} cannot be combined; "
                "choose one of them")
    current = mode(args)
    for option, modes in OPTION_MODES.items():
        value = getattr(args, option)
        if value is None or value is False or current in modes:
            continue
        if option == "ui":
            return "--ui applies only with --bench"
        names = [MODE_NAMES[m] + (" without --ui" if m == BENCH and current == WINDOW_BENCH else "")
                 for m in modes]
        shown = option.replace("_", "-")
        return f"--{shown} does not apply {MODE_NAMES[current]}; it applies only " \
               + " or ".join(names)
    return None
