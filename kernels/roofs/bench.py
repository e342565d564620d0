"""The roofs' bench workload: `main.py --bench --only roofs` measures the roofs and, in the same
run, the separate measurements they are checked against (kernels/roofs/check.py)."""
from __future__ import annotations

from ..bench import Workload, result
from .check import check


def _bench(backend, repeats: int) -> list[dict]:
    rows = []
    for r in check(backend, repeats=max(3, min(repeats, 10))):
        rows.append(result("roofs", backend, r["quantity"], "-", [], metrics={
            "roof": r["roof"], "check": r["check"], "ratio": r["ratio"],
            "within 10 %": r["within"], "check is": r["note"]}))
    return rows


def workloads() -> list[Workload]:
    return [Workload("roofs", "the roofline's roofs (bandwidth, float32/float64/int32 peaks) "
                              "against a separate, longer measurement of each", _bench)]
