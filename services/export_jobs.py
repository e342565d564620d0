"""Export jobs the window hands to the scheduler: render a picture of any size in strips and write
it to a file. Qt-free (it runs on the scheduler's thread); the file writing is services.files',
the rendering the workload's (the renderer kernels.mandelbrot.jobs chooses), and this module only
joins the two.

An export is a generator job: it yields after every strip, so the scheduler runs the view's frames
between strips and the picture on screen keeps answering the mouse while a large export runs.
"""
from __future__ import annotations

from dataclasses import dataclass

from kernels.backend import Backend
from kernels.mandelbrot.jobs import DEEP, releasing, renderer_kind, renderer_of
from kernels.mandelbrot.request import DeepFrameRequest, MandelbrotRequest
from kernels.scheduler import ExportProgress, Exported, JobContext

from .files import StripWriter, check_writable


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
    with StripWriter(job.path, w, h) as writer:     # an exception or a cancel: no file change
        strips = renderer.strips(job.request, values=job.path.lower().endswith(".npy"),
                                 cancel=ctx.token)
        try:
            for row0, strip in strips:
                fraction = writer.add(row0, strip)
                # the strip's buffer is the export renderer's own: other jobs may run meanwhile
                yield ExportProgress(float(fraction))
                ctx.token.check()
        finally:
            strips.close()
    return Exported(str(job.path))


def _export_on_gpus(ctx: JobContext, job: MandelbrotExport):
    """The picture in bands over the chosen GPUs, each band written as its turn comes. The pool's
    threads (one per GPU) are made for this export and end with it."""
    from kernels.mandelbrot.tiles import BandJob, band_rows, bands
    from kernels.spread import LocalPool
    w, h = job.request.size
    values = job.path.lower().endswith(".npy")
    cut = bands(h, band_rows(w, h))
    with StripWriter(job.path, w, h) as writer, LocalPool(job.backend, job.gpus) as pool:
        for _, band in pool.ordered([BandJob(job.request, r0, n, values=values) for r0, n in cut],
                                    cancel=ctx.token):
            yield ExportProgress(float(writer.add(writer.done, band)))
            ctx.token.check()
    return Exported(str(job.path))


# the export's own renderers go when it ends (the view's stay)
HANDLERS = {MandelbrotExport: releasing(export_mandelbrot, "export")}
