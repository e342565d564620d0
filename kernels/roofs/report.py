"""The roofline in the `--bench` report: each result's counted work with its achieved rates, the
roof that bounds it and the % of it, and the roofs themselves (measured in the same run).

Per result, "work" lists one entry per counted kernel (kernels/roofs/work.py): name, kind, ops,
bytes, seconds (the median over the runs), and once the roofs are known intensity, ops_per_s,
bytes_per_s, roof ("memory" or "compute"), roof_per_s and roof_percent. The report's
`roofs_beaten`, where there are any, lists the entries above their roof by more than its spread (kernels/roofs/hold.py).
"""
from __future__ import annotations

import statistics

from .hold import beats
from .model import Roofs
from .work import Work, place_one, work_seconds


def result_work(runs) -> list[dict]:
    """The counted work of a result's runs (Timings): the first run's counts, the median time."""
    if not runs or not getattr(runs[0], "work", None):
        return []
    out = []
    for i, w in enumerate(runs[0].work):
        secs = [work_seconds(t.phases_ms, t.detail, t.work[i]) for t in runs
                if len(t.work) > i]
        secs = [s for s in secs if s is not None]
        d = w.as_dict()
        d["seconds"] = statistics.median(secs) if secs else None
        out.append(d)
    return out


def annotate(report: dict, roofs: Roofs | None) -> dict:
    """Add the roofs and each work entry's rates and % of roof to a bench report (in place)."""
    report["roofs"] = roofs.as_dict() if roofs is not None else None
    beaten = []
    for r in report.get("results", []):
        for entry in r.get("work", []):
            w = Work.from_dict({k: v for k, v in entry.items() if k in Work.__dataclass_fields__})
            p = place_one(w, entry.get("seconds"), roofs)
            entry.update({k: v for k, v in p.as_dict().items()
                          if k in ("intensity", "ops_per_s", "bytes_per_s", "roof", "roof_per_s",
                                   "roof_percent")})
            b = beats(p, roofs)
            if b is not None:
                beaten.append({"workload": r.get("workload"), "variant": r.get("variant"),
                               "size": r.get("size"), "name": w.name, "roof": b.roof,
                               "roof_percent": p.percent, "spread_percent": 100 * b.spread})
    report.pop("roofs_beaten", None)
    if beaten:                  # only then: the report's layout stays as it was otherwise
        report["roofs_beaten"] = beaten
    return report


def counted(report: dict) -> bool:
    return any(r.get("work") for r in report.get("results", []))


def roof_percent(result: dict) -> float | None:
    """The table's "% roof": the first counted kernel's (the useful work, where there are two)."""
    for entry in result.get("work", []):
        if entry.get("roof_percent") is not None:
            return entry["roof_percent"]
    return None


def roofs_summary(report: dict) -> str:
    """The lines under the bench's table: the roofs, how and when they were measured, and the
    results that beat them beyond their spread ("" when no roofs were measured)."""
    d = report.get("roofs")
    if not d:
        return ""
    roofs = Roofs.from_dict(d)
    from .model import KIND_TITLES, ROOF_NAMES
    from .work import si
    parts = []
    for name in ROOF_NAMES:
        rate = roofs.bandwidth_Bps if name == "bandwidth" else roofs.peak(name)
        if not rate:
            continue
        how = roofs.how(name)
        unit = "B/s" if name == "bandwidth" else ("op/s" if name == "int32" else "flop/s")
        spread = f" ±{100 * how['spread']:.1f} %" if how.get("spread") else ""
        by = f" ({how['probe']})" if how.get("probe") else ""
        parts.append(f"{'bandwidth' if name == 'bandwidth' else KIND_TITLES[name]} "
                     f"{si(rate, unit)}{spread}{by}")
    lines = [f"roofs: {'; '.join(parts) or 'none measured'}",
             f"  measured {roofs.measured_at or '?'}" + (f", timed by {roofs.method}"
                                                        if roofs.method else "")]
    again = report.get("roofs_remeasured")
    if again:
        lines.append(f"  re-measured: {len(again['because'])} result(s) beat the first roofs "
                     "beyond their spread")
    for b in report.get("roofs_beaten", []):
        which = "bandwidth" if b["roof"] == "bandwidth" else f"{KIND_TITLES[b['roof']]} peak"
        lines.append(f"  above its roof: {b['workload']} {b['variant']} {b['name']}: "
                     f"{b['roof_percent']:.1f} % of the {which} (spread {b['spread_percent']:.1f} %)")
    return "\n".join(lines)
