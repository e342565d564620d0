"""How far a frame of the Mandelbrot view has got, as the status bar says it: one bar that only goes
forward. A deep frame reports stages (the kernels' compile, the reference orbit, the approximation
table, the pixels of the coarse pass, then of the full one), each mapped to a fixed share of the
bar, so that the reference reaching 100 % is not followed by "pixels 46 %". Qt-free; the clock is
passed in.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kernels.mandelbrot.requests.request import DEEP_STAGE_WORDS as STAGE_WORDS
from kernels.numba_cache import compile_when

# the bar's share of each stage: (start, end); a progressive frame's pixels come twice
REFERENCE = (0.0, 0.6)
TABLE = (0.6, 0.6)          # short beside the orbit: the bar holds while the words say it
COARSE_PIXELS = (0.6, 0.7)
FULL_PIXELS = (0.7, 1.0)
ONE_PASS_PIXELS = (0.6, 1.0)
LONG_JOB_S = 2.0        # a frame that took longer ends with "done in N s" in the status bar


@dataclass
class FrameProgress:
    """One submitted frame: `started` (seconds, any clock), whether it comes coarse first."""
    started: float
    progressive: bool = False
    fraction: float = 0.0          # of the whole frame, never lower than before
    shown: bool = False            # a progress line is on show in the status bar
    coarse_done: bool = False      # the coarse pass is on screen: pixels now are the full pass's
    stages: list = field(default_factory=list)

    def share(self, stage: str) -> tuple[float, float] | None:
        if stage == "reference":
            return REFERENCE
        if stage == "table":
            return TABLE
        if stage == "pixels":
            if not self.progressive:
                return ONE_PASS_PIXELS
            return FULL_PIXELS if self.coarse_done else COARSE_PIXELS
        return None

    def update(self, stage: str, fraction: float) -> str:
        """The status line for a progress report of `stage` at `fraction` (0..1) of that stage."""
        self.shown = True
        if stage not in self.stages:
            self.stages.append(stage)
        span = self.share(stage)
        if span is None:            # the compile: no share of the bar, say what it is
            words = STAGE_WORDS.get(stage, stage).format(when=compile_when())
            return f"Deep frame: {words}…   (Esc cancels)"
        f = max(0.0, min(1.0, float(fraction)))
        self.fraction = max(self.fraction, span[0] + (span[1] - span[0]) * f)
        what = STAGE_WORDS.get(stage, stage)
        if stage == "pixels" and self.progressive:
            what = "pixels, full resolution" if self.coarse_done else "pixels, coarse preview"
        return f"Deep frame {self.fraction:.0%}: {what}   (Esc cancels)"

    def coarse_shown(self):
        self.coarse_done = True
        if self.progressive:
            self.fraction = max(self.fraction, COARSE_PIXELS[1])

    def done_text(self, now: float, fmt: str) -> str | None:
        """How the frame ended, when it is worth saying (progress was on show, or it was long)."""
        took = now - self.started
        if not self.shown and took < LONG_JOB_S:
            return None
        kind = "Frame" if fmt == "float64" else f"Deep frame ({fmt})"
        return f"{kind} done in {took:.1f} s"
