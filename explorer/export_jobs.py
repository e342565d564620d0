"""Export jobs the window hands to the scheduler: render a picture of any size in strips and write
it to a file. Qt-free (it runs on the scheduler's thread); the file writing is the command line's
(cli.files), the rendering the workload's, and this module only joins the two."""
from __future__ import annotations

from dataclasses import dataclass

from cli.files import check_writable, write_strips
from kernels.backend import Backend
from kernels.mandelbrot.renderer import Renderer
from kernels.mandelbrot.request import MandelbrotRequest
from kernels.scheduler import ExportProgress, Exported, JobContext


@dataclass(frozen=True)
class MandelbrotExport:
    request: MandelbrotRequest          # size = the picture's size; want_values for .npy
    path: str
    backend: Backend


def export_mandelbrot(ctx: JobContext, job: MandelbrotExport) -> Exported:
    # its own renderer: an export's strips must not evict the frames on screen
    check_writable(job.path)
    renderer = ctx.renderer(("mandelbrot", "export"), lambda: Renderer(ctx.backend))
    w, h = job.request.size
    strips = renderer.strips(job.request, values=job.path.lower().endswith(".npy"), cancel=ctx.token)
    write_strips(job.path, w, h, strips,
                 progress=lambda fraction: ctx.report(ExportProgress(float(fraction))))
    return Exported(str(job.path))


HANDLERS = {MandelbrotExport: export_mandelbrot}
