"""An export's or a movie's own renderers go when it ends (done, failed or cancelled): the window's
scheduler keeps no more renderers, and no deep reference orbit, than before it."""
import os

import pytest

from kernels.backend import Backend
from kernels.jobs import default_handlers
from kernels.mandelbrot.requests.request import MandelbrotRequest
from kernels.scheduler import Delivered, Failed, Scheduler, Stopped
from services import export_jobs, movie_jobs, movie_parts, movie_writer
from services.movie import MovieSpec

CPU = Backend("cpu")


def last(events):
    """The last event that says how a job ended."""
    return [e for e in events if isinstance(e, (Delivered, Failed, Stopped))][-1]


def scheduler(events):
    handlers = default_handlers()
    handlers.update(export_jobs.HANDLERS)
    handlers.update(movie_jobs.HANDLERS)
    s = Scheduler(events.append, synchronous=True, handlers=handlers)
    s.submit("view", MandelbrotRequest(-0.5, 0.0, 3.0, (16, 12), 50, backend=CPU))
    assert isinstance(last(events), Delivered)
    return s


def test_a_picture_export_leaves_no_renderer_behind(tmp_path):
    events = []
    s = scheduler(events)
    before = s.renderer_count()
    req = MandelbrotRequest(-0.5, 0.0, 3.0, (40, 30), 50, backend=CPU)
    s.submit("export", export_jobs.MandelbrotExport(req, str(tmp_path / "p.png"), CPU))
    assert isinstance(last(events), Delivered) and (tmp_path / "p.png").exists()
    assert s.renderer_count() == before
    # a failed one too (a folder that went away)
    s.submit("export", export_jobs.MandelbrotExport(req, str(tmp_path / "gone" / "p.png"), CPU))
    assert isinstance(last(events), Failed) and s.renderer_count() == before


def test_a_movie_export_leaves_no_renderer_behind(tmp_path, monkeypatch):
    pytest.importorskip("av", reason="the movie extra (PyAV) is not installed")
    monkeypatch.setattr(movie_parts, "SEGMENT_SECONDS", 0.5)
    monkeypatch.setattr(movie_writer, "default_lanes", lambda kind, size: 2)
    events = []
    s = scheduler(events)
    before = s.renderer_count()
    spec = MovieSpec(out=str(tmp_path / "m.mp4"), size=(32, 18), fps=4, seconds=2.0,
                     center="-0.7436438870,0.1318259043", width="1e-4")
    s.submit("movie", movie_jobs.MovieExport(spec, CPU))
    assert isinstance(last(events), Delivered), last(events)
    assert os.path.exists(spec.out)
    assert s.renderer_count() == before
