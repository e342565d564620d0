"""Export jobs the window hands to the scheduler: render a picture of any size in strips and write
it to a file. Qt-free (it runs on the scheduler's thread); the file writing is the command line's
(cli.files), the rendering the workload's, and this module only joins the two.

An export is a generator job: it yields after every strip, so the scheduler runs the view's frames
between strips and the picture on screen keeps answering the mouse while a large export runs.
"""
from __future__ import annotations

from dataclasses import dataclass

from cli.files import StripWriter, check_writable
from kernels.backend import Backend
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.request import MandelbrotRequest
from kernels.scheduler import ExportProgress, Exported, JobContext


@dataclass(frozen=True)
class MandelbrotExport:
    request: MandelbrotRequest          # size = the picture's size; want_values for .npy
    path: str
    backend: Backend


def export_mandelbrot(ctx: JobContext, job: MandelbrotExport):
    # checked again here (the view checks before submitting): the folder may have gone since
    check_writable(job.path)
    # its own renderer: an export's strips must not evict the frames on screen
    renderer = ctx.renderer(("mandelbrot", "export"), lambda: Renderer(ctx.backend))
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


HANDLERS = {MandelbrotExport: export_mandelbrot}
