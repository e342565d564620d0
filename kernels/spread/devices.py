"""The machine's GPUs as the user names them: `--gpus all` or `--gpus 0,1`, checked before any
work against the GPUs numba-cuda sees (CUDA_VISIBLE_DEVICES applies)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuInfo:
    index: int
    name: str
    memory_gib: float | None = None

    def __str__(self) -> str:
        mem = f", {self.memory_gib:.0f} GiB" if self.memory_gib else ""
        return f"{self.index}: {self.name}{mem}"


def gpu_list() -> list[GpuInfo]:
    """Every GPU numba-cuda can use here (none without a driver; one under the simulator)."""
    from ..backend import cuda_status
    status = cuda_status()
    if not status.usable:
        return []
    if status.simulated:
        return [GpuInfo(0, "CUDA simulator")]
    from numba import cuda
    out = []
    for dev in cuda.list_devices():
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        mem = None
        try:
            mem = int(dev.TOTAL_MEMORY) / 2 ** 30
        except Exception:  # an attribute this driver does not report: the name alone will do
            pass
        out.append(GpuInfo(int(dev.id), name, mem))
    return out


def parse_gpus(text: str | None, gpus: list[GpuInfo]) -> tuple[int, ...]:
    """The GPU indices `text` names ("all", "0", "0,1"), checked against `gpus`; ValueError in
    one line naming the GPUs there are."""
    there = "this machine has no usable GPU" if not gpus else \
        f"this machine has {len(gpus)}: " + "; ".join(str(g) for g in gpus)
    text = "all" if text is None else str(text).strip().lower()
    if text == "all":
        if not gpus:
            raise ValueError(f"--gpus all: {there}")
        return tuple(g.index for g in gpus)
    known = {g.index for g in gpus}
    picked: list[int] = []
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit():
            raise ValueError(f"--gpus must be all or GPU numbers such as 0,1; got {text!r}")
        i = int(part)
        if i not in known:
            raise ValueError(f"--gpus: GPU {i} does not exist; {there}")
        if i not in picked:
            picked.append(i)
    return tuple(picked)
