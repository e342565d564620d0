"""A float64 or float32 frame's work once its kernels are compiled (Renderer.render's last step):
the escape pass, unless the values still held for the same place are recoloured; the colours, or
the overlay drawn in their place; the roofline's count; the copies home; the frame's readout.

Written as one run from top to bottom on purpose: a frame's request passes this module once and
comes back to none of it (issue 36), so the steps are inline, not helpers called in turn.
"""
from __future__ import annotations

import numpy as np

from ...frame import Frame
from ...timing import JobTimer
from ..colouring import overlays as ov
from ..colouring.colourer import Colourer
from ..loops.escape import PixelGrid
from .frame_work import start_count
from ..requests.request import MandelbrotRequest, precision_state


def words(rgba8: np.ndarray) -> np.ndarray:
    """uint8 RGBA (h, w, 4) as the uint32 words (h, w) the colour kernels write."""
    return rgba8.view(np.uint32).reshape(rgba8.shape[:2])


def rgba_bytes(words: np.ndarray) -> np.ndarray:
    return words.view(np.uint8).reshape(*words.shape, 4)


class FrameSteps:
    """A renderer's whole frames on its target and colourer, with its buffer pool. Keeps the
    values of the last VALUE_SLOTS computed frames on the target: a frame that differs from the
    last only in colour recolours them, and each frame's readout answers until its slot is reused."""

    VALUE_SLOTS = 3  # like the host ring: the values of the last 3 computed frames stay readable

    def __init__(self, backend, pool, target, colourer, number_type: str,
                 reuse_values: bool = True):
        self.backend, self.pool, self.target = backend, pool, target
        self.colourer: Colourer = colourer
        self.number_type = number_type
        self.reuse_values = reuse_values
        self._slot = -1
        self._slot_key: list = [None] * self.VALUE_SLOTS   # geometry held by each slot
        self._slot_gen: list[int] = [0] * self.VALUE_SLOTS
        self._gen = 0

    def whole_frame(self, request: MandelbrotRequest, counting, compile_ms, cancel=None) -> Frame:
        """Renderer.render's frame of a validated `request`: counting (overlays.counting's, or
        None) says what overlay is drawn and kept; compile_ms (None: none) the compile before it."""
        w, h = int(request.size[0]), int(request.size[1])
        target = self.target
        lanes = None
        if counting is not None and counting.lanes:
            lanes = target.lanes(self.pool, h, w, request.max_iter)
        timer = JobTimer(self.backend, target.stream,
                         f"{request.formula} {w}×{h}, {request.max_iter:,} iterations")
        if compile_ms is not None:
            timer.add_host_ms("compile", compile_ms)

        key = (request.center_re, request.center_im, request.width, w, h, request.max_iter,
               request.formula)
        # a frame that counts runs its escape pass: lane-iterations exist only while it runs
        recolour = (self.reuse_values and counting is None and self._slot >= 0
                    and self._slot_key[self._slot] == key)
        if not recolour:
            self._slot = (self._slot + 1) % self.VALUE_SLOTS
            # invalid until the escape pass has finished (older frames' read-outs answer NaN)
            self._slot_key[self._slot] = None
            self._slot_gen[self._slot] = -1
        slot = self._slot
        # every slot is sized on the first frame of a size, so later frames never allocate
        slots = [target.values(self.pool, f"values{s}", h, w) for s in range(self.VALUE_SLOTS)]
        values = slots[slot]
        rgba = target.rgba(self.pool, "rgba", h, w)
        args = PixelGrid.of(request).args(0, request.max_iter)
        if not recolour:
            target.escape(values, args, timer, cancel, target.counts(self.pool, "counts", h, w),
                          False, formula=request.formula, lanes=lanes)
        drawn = ov.Drawn(counting.name, counting.scale, args,
                         None if lanes is None else lanes.slots) \
            if counting is not None and counting.name else None
        self.colourer.frame_colours(values, rgba, request, request.max_iter, timer, target.stream,
                                    drawn)
        # the roofline's counted work (frame_work.py): one pass where the values lie
        work = None if recolour else start_count(
            self.backend, self.pool, target.stream, values, args, timer,
            kind="f32" if self.number_type == "float32" else "f64",
            kernel=getattr(target, "kernel", None), formula=request.formula)
        if not recolour:
            self._gen += 1
            self._slot_key[slot] = key
            self._slot_gen[slot] = self._gen

        # copied into the host ring where the target copies; on the CPU the buffer itself
        home = target.host(self.pool, "rgba", (h, w, 4), np.uint8, ring=3)
        got = target.download(rgba, None if home is None else home.view(np.uint32).reshape(h, w),
                              timer)
        frame_rgba = got.view(np.uint8).reshape(h, w, 4) if home is None else home
        host_values = None
        if request.want_values or (counting is not None and counting.keep):
            host_values = target.download(
                values, target.host(self.pool, "values", (h, w), np.float64, ring=3), timer)
        slots_home = None
        if lanes is not None and counting.keep:
            slots_home = target.download(lanes.slots, np.empty((h, w), np.int32), timer)
        timings = timer.finish()
        if work is not None:
            work.finish(timings)
        meta = {"recoloured": recolour, "max_iter": request.max_iter,
                "precision": precision_state(request.center_re, request.center_im,
                                             request.width, w)[0],
                "number_type": self.number_type, "backend": self.backend.label}
        if counting is not None:
            totals = {"pixels": w * h, "useful": work.useful()}
            if lanes is not None:
                totals["lane_iterations"] = lanes.issued()
            kept = {}
            if counting.keep:
                from ..colouring.overlay_device import float64_layers     # numba.cuda: overlay frames only
                layers = float64_layers(host_values, args, slots=slots_home)
                kept = {n: ov.shown_values(n, layers) for n in counting.keep}
            meta["overlay"] = info = ov.OverlayInfo(counting.name, counting.scale, totals,
                                                    counting.why, kept)
            timings.label = info.label(timings.label)

        gen = self._slot_gen[slot]

        def fetch_value(row: int, col: int) -> float:
            """One element copied home (on a GPU); NaN once three newer frames have reused
            this frame's value buffer."""
            row, col = int(row), int(col)
            if not (0 <= row < h and 0 <= col < w):
                raise IndexError(f"pixel ({row}, {col}) is outside the {w}×{h} frame")
            if self._slot_gen[slot] != gen:
                return float("nan")
            return target.read(values, row, col)
        return Frame(rgba=frame_rgba, timings=timings, request=request,
                     values=host_values if request.want_values else None,
                     fetch_value=fetch_value, meta=meta)
