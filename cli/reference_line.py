"""The reference orbit of a deep picture, in one line for the terminal: its precision, length and
period, the engine that computed it, and whether the disk cache served it. A deep render spends
most of its first seconds on this orbit; without the line a user cannot tell a cached orbit from a
fresh one, or why a second run was quicker."""
from __future__ import annotations

from kernels.mandelbrot.requests.formulas import LABELS, MANDELBROT

SOURCES = {"disk": "from the disk cache", "pinned": "shared with another frame"}


def reference_line(renderer) -> str | None:
    """'reference orbit: 3,424 bits, 671,046 points, period 139, engine fixed, computed in 2.1 s'
    for the renderer's last deep frame; None for a renderer without one (float64)."""
    deep = getattr(renderer, "deep", None)
    return orbit_line(getattr(deep, "orbit", None), getattr(deep, "reference_source", None))


def orbit_line(orbit, source: str | None = "") -> str | None:
    """The line for `orbit` (None: no line). `source`: "disk" | "pinned" where it was found, None
    when computed, "" when unknown (an orbit loaded from disk has spent no time computing)."""
    if orbit is None:
        return None
    parts = [f"{int(orbit.precision):,} bits", f"{int(orbit.length):,} points"]
    if getattr(orbit, "period", None):
        parts.append(f"period {int(orbit.period):,}")
    parts.append(f"engine {getattr(orbit, 'engine_name', '?')}")
    ms = getattr(orbit, "compute_ms", None)
    if source == "":
        source = None if ms else "disk"
    if source in SOURCES:
        parts.append(SOURCES[source])
    else:
        parts.append("computed" if not ms else f"computed in {ms:.0f} ms" if ms < 1e3
                     else f"computed in {ms / 1e3:.1f} s")
    return "reference orbit: " + ", ".join(parts)


def exact_line(renderer, mode: str = "proved", formula: str = MANDELBROT) -> str | None:
    """exact_words for the renderer's last deep frame."""
    return exact_words(getattr(getattr(renderer, "deep", None), "last_exact", None) or {}, mode,
                       formula)


def exact_words(got: dict, mode: str = "proved", formula: str = MANDELBROT) -> str | None:
    """'5 pixels that float64 deltas cannot place: marked (...)', '... proved in double-double'
    or '... iterated in MPFR' for the counts `got` (exact_redo's dd_, exact_ and marked_pixels)
    of a deep picture drawn with `mode` (its request's `pixels`) and `formula`; None when there
    were none. Another formula has no double-double pass and no overlays."""
    exact, marked = int(got.get("exact_pixels", 0)), int(got.get("marked_pixels", 0))
    proved = int(got.get("dd_pixels", 0))
    done = "; ".join(part for part in (f"{proved:,} proved in double-double" if proved else "",
                                       f"{exact:,} iterated in MPFR" if exact else "") if part)
    if marked:
        plain = formula == MANDELBROT
        hint = {"marked": "without --marked-pixels they are iterated in double-double, with "
                          "--exact-pixels then in MPFR" if plain else
                          "--exact-pixels iterates them in MPFR",
                "exact": "MPFR's count did not settle by the largest precision tried"}.get(
            mode, "the double-double pass could not prove them; --exact-pixels iterates them in "
                  "MPFR" if plain else f"the {LABELS[formula]} has no double-double pass; "
                                       "--exact-pixels iterates them in MPFR")
        shown = " (2 in the redone overlay)" if plain else ""
        return (f"{marked:,} pixel{'s' if marked != 1 else ''} that float64 deltas cannot place: "
                f"kept at the loop's value and marked{shown}; {hint}"
                + (f" ({done})" if done else ""))
    if exact or proved:
        return f"{exact + proved:,} pixel{'s' if exact + proved != 1 else ''} that float64 " \
               f"deltas cannot place: {done}"
    return None
