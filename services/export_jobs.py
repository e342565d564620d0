"""Export jobs the window hands to the scheduler: render a picture of any size in strips and write
it to a file. Qt-free (it runs on the scheduler's thread); the file writing is services.files',
the rendering the workload's (the renderer kernels.mandelbrot.jobs chooses), and this module only
joins the two.

An export is a generator job: it yields after every strip, so the scheduler runs the view's frames
between strips and the picture on screen keeps answering the mouse while a large export runs.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from kernels.backend import Backend
from kernels.mandelbrot.jobs import DEEP, releasing, renderer_kind, renderer_of
from kernels.mandelbrot.requests.request import DeepFrameRequest, MandelbrotRequest
from kernels.scheduler import ExportProgress, Exported, JobContext

from .files import StripWriter, check_writable
from .render import VALUE_PASS_SHARE


def needs_whole_picture(request, values: bool) -> bool:
    from kernels.mandelbrot.colouring.picture_colour import needs_whole_picture as needs
    return needs(request, values)


@dataclass(frozen=True)
class MandelbrotExport:
    request: MandelbrotRequest | DeepFrameRequest   # size = the picture's; want_values for .npy
    path: str
    backend: Backend
    # GPUs to spread the bands over (kernels.spread: one worker thread per GPU); None: the
    # scheduler's own GPU, in strips between the view's frames
    gpus: tuple[int, ...] | None = None


def _export_renderer(ctx: JobContext, request):
    """The export's own renderer: its strips must not evict the frames on screen. A deep export
    starts from the view's reference orbit (the scheduler's deep renderer) when that serves."""
    exporter = renderer_of(ctx, request, "export")
    if renderer_kind(request) != DEEP:
        return exporter
    view = renderer_of(ctx, request)        # the view's own deep renderer
    if view.deep.orbit is not None and exporter.deep.orbit is not view.deep.orbit:
        exporter.deep.orbit = view.deep.orbit       # used only where it serves (orbit.serves)
    return exporter


def export_mandelbrot(ctx: JobContext, job: MandelbrotExport):
    # checked again here (the view checks before submitting): the folder may have gone since
    check_writable(job.path)
    if job.gpus and job.backend.is_gpu:
        return (yield from _export_on_gpus(ctx, job))
    renderer = _export_renderer(ctx, job.request)
    w, h = job.request.size
    npy = job.path.lower().endswith(".npy")
    if needs_whole_picture(job.request, npy):
        return (yield from _export_whole(ctx, job, renderer))
    with StripWriter(job.path, w, h) as writer:     # an exception or a cancel: no file change
        strips = renderer.strips(job.request, values=npy, cancel=ctx.token)
        try:
            for row0, strip in strips:
                fraction = writer.add(row0, strip)
                # the strip's buffer is the export renderer's own: other jobs may run meanwhile
                yield ExportProgress(float(fraction))
                ctx.token.check()
        finally:
            strips.close()
    return Exported(str(job.path))


def _whole_picture(job: MandelbrotExport, colourer, stream, rows: int):
    from kernels.mandelbrot.colouring.picture_colour import WholePicture
    req = job.request
    return WholePicture(colourer, req.size, req, req.max_iter, rows, stream,
                        folder=os.path.dirname(os.path.abspath(job.path)))


def _write_whole(ctx: JobContext, job: MandelbrotExport, pic, parts):
    """Colour pass of a picture coloured as one: `parts` (an iterator of (row0, values)) kept
    first, yielding after each (VALUE_PASS_SHARE of the bar), then every strip coloured with the
    whole picture's statistics and written."""
    w, h = job.request.size
    with StripWriter(job.path, w, h) as writer:
        try:
            for row0, values in parts:
                pic.add(row0, values)
                yield ExportProgress(VALUE_PASS_SHARE * (row0 + values.shape[0]) / h)
                ctx.token.check()
            for row0, strip in pic.strips(ctx.token):
                fraction = writer.add(row0, strip)
                yield ExportProgress(VALUE_PASS_SHARE + (1 - VALUE_PASS_SHARE) * float(fraction))
                ctx.token.check()
        finally:
            close = getattr(parts, "close", None)
            if close is not None:
                close()
            pic.close()
    return Exported(str(job.path))


def _export_whole(ctx: JobContext, job: MandelbrotExport, renderer):
    """A picture in a mapping that rests on its statistics (log, histogram), coloured as one."""
    from kernels.mandelbrot.requests.strips import strip_rows
    w, h = job.request.size
    rows = min(strip_rows(w), h)
    values = renderer.strips(job.request, values=True, rows=rows, cancel=ctx.token)
    pic = _whole_picture(job, renderer.colourer, renderer.stream, rows)
    return (yield from _write_whole(ctx, job, pic, values))


def _export_on_gpus(ctx: JobContext, job: MandelbrotExport):
    """The picture in bands over the chosen GPUs, each band written as its turn comes. The pool's
    threads (one per GPU) are made for this export and end with it."""
    from kernels.mandelbrot.tiles import BandJob, bands, picture_rows
    from kernels.spread import LocalPool
    w, h = job.request.size
    values = job.path.lower().endswith(".npy")
    rows = picture_rows(job.request)
    cut = bands(h, rows)
    if needs_whole_picture(job.request, values):
        # every band's values from the GPUs, then coloured as one picture on this one's device
        from kernels.mandelbrot.colouring.colourer import Colourer
        with LocalPool(job.backend, job.gpus) as pool:
            parts = ((cut[i][0], band) for i, band in pool.ordered(
                [BandJob(job.request, r0, n, values=True) for r0, n in cut], cancel=ctx.token))
            pic = _whole_picture(job, Colourer(job.backend), None, rows)
            return (yield from _write_whole(ctx, job, pic, parts))
    with StripWriter(job.path, w, h) as writer, LocalPool(job.backend, job.gpus) as pool:
        for _, band in pool.ordered([BandJob(job.request, r0, n, values=values) for r0, n in cut],
                                    cancel=ctx.token):
            yield ExportProgress(float(writer.add(writer.done, band)))
            ctx.token.check()
    return Exported(str(job.path))


# the export's own renderers go when it ends (the view's stay)
HANDLERS = {MandelbrotExport: releasing(export_mandelbrot, "export")}
