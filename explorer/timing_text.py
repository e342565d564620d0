"""What the timing panel writes, Qt-free: times and sizes in words, the last frame's listing (HTML,
coloured like its bar), the compile line, and the rows of the totals table.

The numbers come from explorer.timing_breakdown (one frame) and explorer.timing_log (histories).
"""
from __future__ import annotations

from kernels.timing import HOST_COSTS, Timings

from .timing_breakdown import (COPY_PHASES, FRAME_PHASES, NAMES, frame_segments, frame_total,
                               phase_ms, sub_phases)
from .timing_log import History

COLOURS = {"h2d": "#e8a33d", "kernel": "#3d8fe8", "compute": "#3d8fe8", "colourise": "#93c5f7",
           "d2h": "#a05ad6", "host": "#6b7280", "host-work": "#6b7280", "display": "#a3aab5",
           "other": "#d4d7dd", "compile": "#d9534f", "allocate": "#c2b280",
           "launch setup": "#b7c9a8", "timing setup": "#c9b7d6", "rest": "#d4d7dd"}
NO_COPIES = "no host↔device copies on the CPU"
# what each way of timing (kernels.timing, native_clock) guarantees, for the panel's note
METHOD_WORDS = {
    "CUPTI activity records": "the GPU's own start and end of each kernel and copy",
    "CUDA events behind a gate": "the work was held on the GPU until all of it was queued, so "
                                 "no pause of this program is inside",
    "CUDA events": "a pause of this program while queuing the work may be inside",
    "native clock (inside the compiled kernel)": "read by the kernel's own code: a wait for "
                                                 "Python's lock after it is not inside",
    "native clock (stamped inside the parallel loop)": "read by the loop's own threads as they "
                                                       "finish: neither a wait for Python's lock "
                                                       "nor a thread woken late is inside",
    "thread CPU time": "the CPU time of the thread that ran it: a wait for Python's lock is not "
                       "inside",
    "wall clock": "the host's clock around the work",
}


def fmt_ms(ms) -> str:
    if ms is None:
        return "not timed"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.3f} ms"


def fmt_bytes(n: int) -> str:
    if n >= 2**30:
        return f"{n / 2**30:.2f} GiB"
    if n >= 2**20:
        return f"{n / 2**20:.1f} MiB"
    if n >= 2**10:
        return f"{n / 2**10:.1f} KiB"
    return f"{n} B"


def copy_note(t: Timings, phase: str) -> str:
    """How much a copy phase moved and how fast ("" when it moved nothing)."""
    nb = t.bytes.get(phase, 0)
    if not nb:
        return ""
    bw = t.bandwidth_gbs(phase)
    return f"{fmt_bytes(nb)} at {bw:.1f} GB/s" if bw else f"{fmt_bytes(nb)} moved"


def _listed(t: Timings):
    """(phase, ms) of the frame worth a line: copies not on the CPU, nothing neither timed nor moved."""
    on_cpu = t.backend == "cpu"
    for phase, ms in phase_ms(t).items():
        if on_cpu and phase in COPY_PHASES:
            continue
        if ms is None and not t.bytes.get(phase):
            continue
        yield phase, ms


def describe(t: Timings) -> str:
    """The frame in plain lines (the bar's tooltip): every phase of the bar, then its total."""
    lines = []
    for phase, ms in _listed(t):
        note = copy_note(t, phase) if phase in COPY_PHASES else ""
        lines.append(f"{NAMES[phase]}: {fmt_ms(ms)}" + (f"  ({note})" if note else ""))
    lines.append(f"frame total: {fmt_ms(frame_total(t))}")
    if t.backend == "cpu":
        lines.append(NO_COPIES)
    return "\n".join(lines)


def listing_html(t: Timings) -> str:
    """The bar's numbers, one row per segment, coloured like the bar: the panel's legend."""
    total = frame_total(t) or 1.0
    segs = {s.key: s for s in frame_segments(t)}
    rows = []

    def row(key, name, ms, note="", indent=False):
        share = f"{100 * ms / total:.0f} %" if ms is not None else ""
        swatch = f"<span style='color:{COLOURS[key]}'>■</span>"
        pad = "&nbsp;&nbsp;&nbsp;" if indent else ""
        rows.append(f"<tr><td>{pad}{swatch} {name}</td><td align='right'>{fmt_ms(ms)}</td>"
                    f"<td align='right'>{share}</td></tr>")
        if note:    # a line of its own: beside the numbers it would not fit a narrow dock
            rows.append(f"<tr><td colspan='3' style='color:#555'>&nbsp;&nbsp;&nbsp;&nbsp;{note}"
                        "</td></tr>")

    for phase, ms in _listed(t):
        if phase == "other" and not ms:
            continue
        note = copy_note(t, phase) if phase in COPY_PHASES else ""
        row(phase, NAMES[phase], ms, note)
        for key in ("compute", "colourise") if phase == "kernel" else \
                   ("host-work", "display") if phase == "host" else \
                   ("allocate", "launch setup", "timing setup", "rest") if phase == "other" else ():
            if key in segs:
                row(key, NAMES[key], segs[key].ms, indent=True)
    rows.append(f"<tr><td><b>frame total</b></td><td align='right'><b>{fmt_ms(frame_total(t))}"
                "</b></td><td align='right'>100 %</td></tr>")
    notes = [f"timed by: {t.method}" + (f" — {METHOD_WORDS[t.method]}"
                                          if t.method in METHOD_WORDS else "")]
    if t.backend == "cpu":
        notes.append(NO_COPIES)
    untimed = [NAMES[p] for p in ("h2d", "kernel", "d2h") if t.backend != "cpu"
               and t.phases_ms.get(p) is None and (t.bytes.get(p) or p == "kernel")]
    if untimed:
        notes.append("not timed (no CUDA events, e.g. under the simulator): "
                     + ", ".join(untimed) + "; their time is in “unaccounted”")
    inside = {k: v for k, v in sub_phases(t).items()
              if k not in ("colourise", "display") and k not in HOST_COSTS}
    if inside:
        notes.append("timed inside the phases above: "
                     + ", ".join(f"{k} {fmt_ms(v)}" for k, v in inside.items()))
    note_html = "".join(f"<div style='color:#555'>{n}</div>" for n in notes)
    return ("<table cellspacing='0' cellpadding='1' width='100%'>" + "".join(rows)
            + "</table>" + note_html)


def compile_text(h: History | None) -> str:
    """The compile line: JIT compile is counted apart from the frames."""
    comp = h.totals.get("compile") if h else None
    if comp:
        last_c = h.last.phases_ms.get("compile") if h.last else None
        return (f"<span style='color:{COLOURS['compile']}'>■</span> JIT compile: {fmt_ms(comp[0])} "
                f"in {comp[1]} job(s)" + (f", last {fmt_ms(last_c)}" if last_c is not None else "")
                + " — kept out of the frames")
    return "JIT compile: none yet" if h is None else "JIT compile: none for these jobs"


def totals_rows(h: History) -> list[tuple[str, list[str]]]:
    """(phase, [name, total, share, average]) of the totals table: compile first (no share), no
    copies on the CPU, no empty unaccounted."""
    order = ("compile",) + FRAME_PHASES
    rows = [(ph, *h.totals[ph]) for ph in order if ph in h.totals
            and not (h.on_cpu and ph in COPY_PHASES) and not (ph == "other" and not h.totals[ph][0])]
    grand = sum(tot for ph, tot, _ in rows if ph != "compile") or 1.0
    out = []
    for ph, tot, calls in rows:
        share = "—" if ph == "compile" else f"{100 * tot / grand:.1f} %"
        out.append((ph, [NAMES[ph], fmt_ms(tot), share, fmt_ms(tot / calls)]))
    return out
