"""Where one frame's milliseconds went, as named phases that add up: the model behind the timing panel.

A `Timings` record (kernels.timing) holds the phases its job measured and the job's wall clock
("total"). They do not add up by themselves: launches, Python between the phases and waiting for
the device are inside the wall clock but inside no phase, and the views add the time they take to
show a frame to "host" after the wall clock has stopped. `frame_segments` turns a record into
segments that do add up: the measured phases (copy in, compute, copy out, host) plus one named
"unaccounted" phase for the rest of the wall clock, so every millisecond of a bar has a name.

JIT compile is kept out of the frame: the first frame's compile would squash every other bar, so
the panel shows it apart. Renderers time it inside their wall clock; the throughput sweep times it
before (its points are medians of warm runs). A compile longer than what the wall clock leaves
unexplained cannot have been inside it, and is then not taken out of the remainder.

Qt-free and small, so the arithmetic is tested without a window; the histories of many frames
are explorer.timing_log.
"""
from __future__ import annotations

from dataclasses import dataclass

from kernels.timing import HOST_COSTS, Timings

# the phases of a frame, in the order they usually run (a host-side mesh can come first: the bar
# lays durations end to end, it is not a trace with timestamps)
FRAME_PHASES = ("h2d", "kernel", "d2h", "host", "other")
COPY_PHASES = ("h2d", "d2h")
# sub-phases that kernels.timing's `detail` reports inside a main phase and the bar splits out
SPLITS = {"kernel": "colourise", "host": "display"}

NAMES = {"compile": "JIT compile", "h2d": "host→device copy", "kernel": "kernel / compute",
         "d2h": "device→host copy", "host": "host", "other": "unaccounted",
         "compute": "compute", "colourise": "colourise", "host-work": "host work",
         "display": "display", "allocate": "allocate buffers", "launch setup": "launch setup",
         "timing setup": "timing setup", "rest": "launches, Python, waiting"}
EXPLAIN = {
    "h2d": "copying inputs from host memory to the device",
    "kernel": "the computation: the GPU kernels (CUDA events), or the CPU twin (wall clock)",
    "compute": "the kernel phase without its colouring",
    "colourise": "mapping values through the palette to RGBA (inside the kernel phase)",
    "d2h": "copying results from the device back to host memory",
    "host": "work on the CPU around the kernels (e.g. building a mesh) and showing the frame",
    "host-work": "work on the CPU around the kernels (e.g. building a mesh)",
    "display": "handing the frame to the screen (inside the host phase)",
    "other": "the job's wall clock outside every timed phase: kernel launches, Python between "
             "the phases, waiting for the device, and what is named under it",
    "allocate": "allocating device and pinned host buffers (a new size's first frame only: "
                "buffers are reused after)",
    "launch setup": "preparing a kernel's first launch: its compiled code looked up, loaded on "
                    "the device, its arguments' conversion kept for later launches",
    "timing setup": "starting what times the GPU (CUPTI, or the gate's spin kernel): once "
                    "per process",
    "rest": "kernel launches, Python between the phases and waiting for the device: host time "
            "that no clock of its own measured",
    "compile": "numba compiling the kernels (first use; cached on disk afterwards), kept apart",
}


@dataclass(frozen=True)
class Segment:
    """A piece of a frame's bar: `key` names its colour and name, `phase` the frame phase it
    belongs to (equal to key unless it is a split-out sub-phase such as colourise)."""
    key: str
    phase: str
    ms: float


def _number(v) -> float | None:
    # detail also holds flags (e.g. "reference_reused": True): only real numbers are times
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v)


def unaccounted_ms(t: Timings) -> float:
    """The job's wall clock that no phase explains (≥ 0; 0 when the wall clock was not taken)."""
    total = t.phases_ms.get("total")
    if total is None:
        return 0.0
    named = sum(t.phases_ms.get(p) or 0.0 for p in FRAME_PHASES[:-1])
    display = _number(t.detail.get("display")) or 0.0   # added to host after the wall clock
    rest = total - (named - display)
    compile_ms = t.phases_ms.get("compile") or 0.0
    if compile_ms <= rest:
        rest -= compile_ms
    return max(rest, 0.0)


def phase_ms(t: Timings) -> dict[str, float | None]:
    """Frame phase -> ms (None: not measured, e.g. the simulator's GPU phases); "other" included."""
    out = {p: t.phases_ms.get(p) for p in FRAME_PHASES[:-1]}
    out["other"] = unaccounted_ms(t)
    return out


def frame_total(t: Timings) -> float:
    """The frame's length on the bar: its measured phases plus the unaccounted rest."""
    return sum(v or 0.0 for v in phase_ms(t).values())


def frame_segments(t: Timings) -> list[Segment]:
    """The bar of one frame: non-empty segments in run order, summing to frame_total(t)."""
    segs = []
    for phase, ms in phase_ms(t).items():
        if not ms or ms <= 0:
            continue
        if phase == "other":
            segs.extend(_other_segments(t, ms))
            continue
        sub_name = SPLITS.get(phase)
        sub = _number(t.detail.get(sub_name)) if sub_name else None
        if sub is not None and 0 < sub < ms:
            rest_key = "compute" if phase == "kernel" else "host-work"
            segs.append(Segment(rest_key, phase, ms - sub))
            segs.append(Segment(sub_name, phase, sub))
        else:
            segs.append(Segment(phase, phase, ms))
    return segs


def _other_segments(t: Timings, ms: float) -> list[Segment]:
    """The unaccounted rest split into the host costs noted while the job ran (allocations,
    first launches, timing set-up: kernels.timing.HOST_COSTS), the remainder named as such.
    Costs that add up to more than the rest (noted inside a wall-clock phase) are scaled down."""
    costs = [(k, _number(t.detail.get(k)) or 0.0) for k in HOST_COSTS]
    costs = [(k, v) for k, v in costs if v > 0]
    if not costs:
        return [Segment("other", "other", ms)]
    named = sum(v for _, v in costs)
    scale = min(1.0, ms / named) if named else 1.0
    segs = [Segment(k, "other", v * scale) for k, v in costs]
    rest = ms - named * scale
    if rest > 0:
        segs.append(Segment("rest", "other", rest))
    return segs


def sub_phases(t: Timings) -> dict[str, float]:
    """Numeric detail entries: times measured inside the main phases (already counted there)."""
    return {k: v for k, v in ((k, _number(v)) for k, v in t.detail.items()) if v is not None}


def is_frame(t: Timings) -> bool:
    """False for a job that only compiled (it has no bar; its compile is shown apart)."""
    return frame_total(t) > 0
