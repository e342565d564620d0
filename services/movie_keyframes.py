"""A zoom movie made from exponential-map keyframes (`--movie OUT --keyframes`, issue 37): one
log-polar keyframe per octave of zoom (kernels/mandelbrot/keyframes/expmap.py) drawn by the deep renderer
around one pinned orbit, and every frame resampled from the keyframes it needs and coloured on
the device (expmap_assemble.py), then encoded as any movie (services/movie_writer.py: the
segments, the lanes, the lock, resuming at segment level). Cost follows depth, not length. Frames
that float64 draws (the zoom's first octaves) are drawn directly instead (DirectChunk): a few ms
each, and sharper than resampled near the whole set.

The frames are made in the writer's order, in batches of about BATCH_FRAMES: each batch first
draws the keyframes it needs that nobody has drawn yet, spread over the pool's workers (every GPU,
or a Dask cluster), then its frames, in chunks of consecutive frames, each chunk assembled on one
worker from the keyframes it is handed. A keyframe is kept (in memory and in the keyframes
folder) from the batch that first needs it to the last; so memory and disk hold the keyframes of
a batch's frames, never the whole zoom's. The keyframes folder (OUT.parts/keyframes, or the
user's --keyframes-out DIR, where they all stay) lets an interrupted movie resume at keyframe
level too: a keyframe found there is read, not drawn again, and the values are the same bits.
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from kernels.lent_arrays import LENT

from .movie_parts import parts_dir

# frames a batch holds at most; keyframes within a batch are drawn on all workers at once (the
# more, the less the last keyframe of a batch leaves the other GPUs idle)
BATCH_FRAMES = 512
# consecutive frames one assembly job makes (on one worker, with the keyframes uploaded once)
CHUNK_FRAMES = 8
KEYFRAMES_FOLDER = "keyframes"
# keyframes waiting to be written to the movie's own folder, at most (KeyframeFiles says why)
MAX_PENDING = 4
MANIFEST = "keyframes.json"
# frames no narrower than 2^this (widths) may be drawn directly, as a per-frame movie draws them,
# where float64 draws them: a float64 frame costs a few ms, and near the whole set a frame
# resampled from log-polar keyframes blurs the detail a direct frame keeps; below it a frame is
# always deep (cheap test first: float64 cannot place pixels 2^-60 widths apart)
DIRECT_MIN_LOG2 = -60.0


def keyframes_dir(out: str) -> str:
    """Where an unfinished movie keeps the keyframes its next frames need."""
    out = os.fspath(out)
    folder = parts_dir(out)
    if out.lower().endswith(".png"):
        return os.path.join(folder, f".{os.path.basename(out)}.{KEYFRAMES_FOLDER}")
    return os.path.join(folder, KEYFRAMES_FOLDER)


def keyframe_map(movie):
    """The movie's ExpMap (its keyframes' layout and iteration limits)."""
    from kernels.mandelbrot.keyframes.expmap import expmap_of
    return expmap_of(movie.path, movie.spec.size, float(movie.spec.oversample))


class KeyframeFiles:
    """Keyframes as .npy files (float64 smooth counts, the sectors' samples one after another:
    ExpMap.sectors, rows the angles, columns the log radii from the inner edge out) named
    NNNNN.npy by keyframe, written whole or not at all,
    with a manifest (keyframes.json) that says the layout. `keep`: the user's folder, never
    emptied, every keyframe written; else the movie's own, whose keyframes go once no frame left
    needs them, written by a thread of its own as far as the disk keeps up (`save` skips one
    while MAX_PENDING wait: a 1080p keyframe of 110 MB is written in about the time a GPU draws
    it, so waiting for the disk would halve the movie's pace; a skipped one is drawn again if the
    movie is interrupted). close() (however the movie ends) writes what waits."""

    def __init__(self, folder: str, em, keep: bool = False):
        self.folder, self.em, self.keep = os.fspath(folder), em, keep
        self.skipped = 0
        self._ops: queue.Queue = queue.Queue()
        self._pending = 0
        self._lock = threading.Lock()
        self._error: BaseException | None = None
        self._thread = None
        os.makedirs(self.folder, exist_ok=True)
        manifest = manifest_of(em)
        path = os.path.join(self.folder, MANIFEST)
        old = _read_json(path)
        if old is not None and old != manifest:     # another zoom's keyframes: not these
            for name in os.listdir(self.folder):
                if name.endswith(".npy") and not keep:
                    os.remove(os.path.join(self.folder, name))
            if keep:
                raise ValueError(f"{self.folder} holds the keyframes of another zoom; "
                                 "choose another folder for --keyframes-out")
        _write_json(path, manifest)

    def path(self, k: int) -> str:
        return os.path.join(self.folder, f"{int(k):05d}.npy")

    def load(self, k: int):
        """Keyframe k's values, or None when it is not here (or not whole)."""
        try:
            v = np.load(self.path(k), allow_pickle=False)
        except (OSError, ValueError):
            return None
        if v.shape != (self.em.samples,) or v.dtype != np.float64:
            return None
        return v

    def save(self, k: int, values: np.ndarray) -> None:
        if self._error is not None:
            raise self._error
        if self.keep:       # the user asked for every keyframe: written before the next
            self._write(k, values)
            return
        with self._lock:
            if self._pending >= MAX_PENDING:
                self.skipped += 1
                return
            self._pending += 1
        self._submit(("save", k, values))

    def discard(self, k: int) -> None:
        if not self.keep:
            self._submit(("discard", k, None))

    def release(self, values: np.ndarray) -> None:
        """Keyframe values no frame needs any more: given back to their lender once any save
        of them queued before has been written."""
        if self._thread is None:
            LENT.give(values)
        else:
            self._ops.put(("release", None, values))

    def close(self) -> None:
        """Write what waits and stop the thread; its error (a full disk) raised here."""
        if self._thread is not None:
            self._ops.put(None)
            self._thread.join()
            self._thread = None
        if self._error is not None:
            raise self._error

    def _submit(self, op) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="keyframe-files", daemon=True)
            self._thread.start()
        self._ops.put(op)

    def _run(self) -> None:
        while True:
            op = self._ops.get()
            if op is None:
                return
            what, k, values = op
            if what == "release":
                LENT.give(values)
                continue
            try:
                if what == "save":
                    self._write(k, values)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.remove(self.path(k))
            except OSError as exc:
                self._error = self._error or exc
            finally:
                if what == "save":
                    with self._lock:
                        self._pending -= 1

    def _write(self, k: int, values: np.ndarray) -> None:
        final = self.path(k)
        tmp = _tmp(final)
        with open(tmp, "wb") as f:
            np.save(f, values)
        os.replace(tmp, final)


def manifest_of(em) -> dict:
    """What a keyframe folder's files are (JSON): enough to place every sample."""
    return {"format": "gpu-explorer exponential-map keyframes 2",
            "layout": "keyframe k = NNNNN.npy, float64 smooth escape counts, its sectors one "
                      "after another: sector (cols, row0, rows, offset) holds rows x cols "
                      "samples from offset, sample (i, j) at c = centre + 2^(outer_log2 - k - 1 "
                      "+ (j + 0.5)/cols) * exp(i (row0 + i + 0.5) ln2/cols); counts >= limits[k] "
                      "are inside the set",
            "centre": [em.centre_re, em.centre_im], "sectors": [list(x) for x in em.sectors],
            "count": em.count, "outer_log2": em.outer_log2, "limits": list(em.limits),
            "frame_size": list(em.size), "fixed_point_on_screen": list(em.a)}


@dataclass(frozen=True)
class Colouring:
    """The movie's one colouring (a frame request's fields the Colourer reads)."""
    palette: str
    density: float
    offset: float
    interior: tuple
    mapping: str

    @staticmethod
    def of(request) -> Colouring:
        return Colouring(request.palette, float(request.density), float(request.offset),
                         tuple(request.interior), request.mapping)


@dataclass(frozen=True)
class FrameChunk:
    """A pool job: consecutive frames [(k, width_log2, limit, first, last)] assembled on the
    worker's own Assembler from `keyframes` {k: values}. `batch`: the keyframes of the whole
    batch, which its assembler holds where memory allows (older ones go first): the chunks of every encoder lane come
    in turn, and a stack holding only one chunk's would upload each keyframe again and again.
    Returns (list of RGBA, seconds)."""
    em: object
    frames: tuple
    colouring: Colouring
    keyframes: dict = field(hash=False, compare=False)
    batch: frozenset = frozenset()

    def __call__(self, worker):
        from kernels.mandelbrot.keyframes.expmap_assemble import worker_assembler
        t0 = time.perf_counter()
        need = set(self.keyframes)
        # room for this batch's keyframes and the next batch's, which this worker's GPU copies in
        # as it draws them (KeyframeJob), where the device's memory allows
        asm = worker_assembler(worker, self.em, max(len(need), _affordable(
            worker.backend, self.em, 2 * len(self.batch) + 8)))
        # room for this chunk's keyframes: earlier batches' go first, then other chunks'
        missing = [k for k in sorted(need) if asm.slot_of[k] < 0]
        for stale in (asm.loaded - self.batch - need, asm.loaded - need):
            for k in sorted(stale):
                if len(missing) <= len(asm._free):
                    break
                asm.drop(k)
        for k in missing:
            asm.load(k, self.keyframes[k])
        # each in a lent array (the encoder lane gives it back), taken while the GPU draws the next
        out = list(asm.frames(self.colouring, [f[1:] for f in self.frames], worker.check, LENT))
        return out, time.perf_counter() - t0


@dataclass(frozen=True)
class DirectChunk:
    """A pool job: consecutive frames [(k, width_log2, limit, -1, -2)] too wide for keyframes to
    serve well, each drawn as a per-frame movie draws it (MovieFrameJob). Returns (list of
    RGBA, seconds)."""
    path: object
    frames: tuple
    palette: str | None
    size: tuple
    colouring: tuple = ()

    def __call__(self, worker):
        from .movie import MovieFrameJob
        t0 = time.perf_counter()
        out = []
        for f in self.frames:
            worker.check()
            rgba, _ = MovieFrameJob(self.path, f[0], self.palette, self.size, self.colouring)(worker)
            out.append(rgba)
        return out, time.perf_counter() - t0


def drawn_directly(movie, loc, lw: float) -> bool:
    """Whether the frame at `loc` (2^lw wide) is drawn directly: float64 draws it at the movie's
    size (kernels' one rule, number_format.float64_draws)."""
    if lw < DIRECT_MIN_LOG2:
        return False
    from kernels.mandelbrot.requests.number_format import float64_draws
    return float64_draws(loc.center_re, loc.center_im, loc.width, movie.spec.size[0])


@dataclass
class KeyframeTimes:
    keyframes: int = 0          # drawn by this run
    loaded: int = 0             # read back from the keyframes folder
    keyframe_s: float = 0.0     # the jobs' own time, summed over the workers
    keyframe_wall_s: float = 0.0    # the first batch's keyframes, before any frame
    frames: int = 0
    direct: int = 0             # of them drawn directly (DirectChunk), not from keyframes
    assemble_s: float = 0.0     # the jobs' own time, summed over the workers
    assemble_wall_s: float = 0.0    # the frames and the next keyframes, encoder waits included


def schedule(movie, em, order):
    """The writer's `order` cut into batches of chunks: [[(k, lw, limit, first, last), ...] per
    chunk, ...] per batch, and for every keyframe the last batch that needs it."""
    from kernels.mandelbrot.keyframes.expmap import width_log2
    infos = []
    for k in order:
        loc = movie.path.frame(k)
        lw = width_log2(loc.width)
        # a frame drawn directly needs no keyframe: (first, last) an empty run
        needs = (-1, -2) if drawn_directly(movie, loc, lw) else em.needs(lw)
        infos.append((k, lw, int(loc.iters)) + needs)
    chunks, run = [], []
    for info in infos:
        if run and (info[0] != run[-1][0] + 1 or len(run) >= CHUNK_FRAMES
                    or (info[3] < 0) != (run[-1][3] < 0)):
            chunks.append(run)
            run = []
        run.append(info)
    if run:
        chunks.append(run)
    batches, batch, size = [], [], 0
    for c in chunks:
        if batch and size + len(c) > BATCH_FRAMES:
            batches.append(batch)
            batch, size = [], 0
        batch.append(c)
        size += len(c)
    if batch:
        batches.append(batch)
    last_use = {}
    for b, chunks_b in enumerate(batches):
        for c in chunks_b:
            for k in chunk_keyframes(c):
                last_use[k] = b
    return batches, last_use


def chunk_keyframes(chunk) -> list[int]:
    """The keyframes a chunk's frames sample, each frame's run of them (consecutive frames of a
    short movie may lie octaves apart: not every keyframe between)."""
    return sorted({k for f in chunk for k in range(f[3], f[4] + 1)})


def keyframe_frames(movie, em, order, pool, files: KeyframeFiles, cancel=None,
                    times: KeyframeTimes | None = None, plan=None):
    """The frames of `order` (the writer's) made from keyframes: yields ("keyframe", k) as each
    keyframe is ready and ("frame", k, rgba) for each frame in `order`'s order. A batch's frames
    are made with the next batch's keyframes in between, on all the pool's workers: the encoders
    get frames while keyframes are drawn. Call inside expmap_render.pinned_orbit(em) so every
    renderer of this process shares the orbit. `plan`: schedule(movie, em, order), where the
    caller has it already."""
    from kernels.mandelbrot.keyframes.expmap_render import KeyframeJob
    times = times if times is not None else KeyframeTimes()
    colouring = Colouring.of(movie.request(0))
    batches, last_use = plan if plan is not None else schedule(movie, em, order)
    needs = [sorted({k for c in chunks for k in chunk_keyframes(c)}, reverse=True)
             for chunks in batches]
    held: dict[int, np.ndarray] = {}

    def to_draw(b: int) -> list[int]:
        """Batch b's keyframes not held yet: read back from the folder, the rest to draw
        (deepest first: the orbit's deepest use sets its length)."""
        out = []
        for k in needs[b] if b < len(batches) else ():
            if k in held:
                continue
            got = files.load(k)
            if got is None:
                out.append(k)
            else:
                held[k] = got
                times.loaded += 1
        return out

    def drawn(k: int, values, seconds: float) -> None:
        held[k] = values
        files.save(k, values)
        times.keyframes += 1
        times.keyframe_s += seconds

    first = to_draw(0)
    t0 = time.perf_counter()
    for i, (values, seconds) in pool.ordered([KeyframeJob(em, k) for k in first], cancel=cancel):
        drawn(first[i], values, seconds)
        yield ("keyframe", first[i])
    times.keyframe_wall_s += time.perf_counter() - t0
    for b, chunks in enumerate(batches):
        batch = frozenset(needs[b])
        frames = [FrameChunk(em, tuple(c), colouring, {k: held[k] for k in chunk_keyframes(c)},
                             batch) if c[0][3] >= 0 else
                  DirectChunk(movie.path, tuple(c), movie.palette, movie.spec.size,
                              movie.spec.colouring) for c in chunks]
        ahead = to_draw(b + 1)
        groups = interleave(frames, ahead)
        jobs = [KeyframeGroup(None if kj is None else KeyframeJob(em, ahead[kj]),
                              tuple(frames[j] for j in fjs)) for kj, fjs in groups]
        t0 = time.perf_counter()
        for i, (keyframe, results) in pool.ordered(jobs, cancel=cancel):
            kj, fjs = groups[i]
            if kj is not None:
                drawn(ahead[kj], *keyframe)
                yield ("keyframe", ahead[kj])
            for j, (rgbas, seconds) in zip(fjs, results):
                times.assemble_s += seconds
                times.direct += len(rgbas) if chunks[j][0][3] < 0 else 0
                for f, rgba in zip(chunks[j], rgbas):
                    times.frames += 1
                    yield ("frame", f[0], rgba)
        times.assemble_wall_s += time.perf_counter() - t0
        for k in [k for k, last in last_use.items() if last == b]:
            values = held.pop(k, None)
            files.discard(k)
            if values is not None:
                files.release(values)


def interleave(frames: list, keyframes: list) -> list[tuple]:
    """The keyframes spread evenly among the frame jobs, in groups: [(keyframe index or None,
    [frame job indices])], each keyframe with the frame jobs up to the next one (KeyframeGroup:
    made while the keyframe's GPU work runs)."""
    groups = [(None, [])]
    n_f, n_k, done = len(frames), len(keyframes), 0
    for i in range(n_f):
        groups[-1][1].append(i)
        upto = (i + 1) * n_k // n_f
        while done < upto:
            groups.append((done, []))
            done += 1
    groups += [(j, []) for j in range(done, n_k)]
    return [g for g in groups if g[0] is not None or g[1]]


@dataclass(frozen=True)
class KeyframeGroup:
    """A pool job: a keyframe (KeyframeJob, or None) and frame jobs (FrameChunk, DirectChunk) on
    one worker, the keyframe's GPU work queued first: the worker's host part of the frames is done
    while the GPU draws the keyframe, instead of the GPU idling behind the host between frames.
    The frames never need that keyframe (a batch's frames use keyframes drawn before it). Returns
    (the keyframe's (values, seconds) or None, [each frame job's result])."""
    keyframe: object
    chunks: tuple

    def __call__(self, worker):
        finish = self.keyframe.start(worker) if self.keyframe is not None else None
        try:
            results = [chunk(worker) for chunk in self.chunks]
        except BaseException:
            if finish is not None:      # the renderer's work settled before the error goes on
                with contextlib.suppress(Exception):
                    finish()
            raise
        return (finish() if finish is not None else None), results


def _affordable(backend, em, slots: int) -> int:
    """`slots` keyframes, or as many as half the GPU's free memory holds."""
    if not backend.is_gpu:
        return slots
    from kernels.buffers import free_device_bytes
    free = free_device_bytes()
    each = em.samples * 8
    return slots if free is None else min(slots, max(1, free // 2 // each))


def keyframe_files(movie, em, keyframes_out: str | None) -> KeyframeFiles:
    """The movie's keyframes folder: the user's DIR (kept) or its own beside the parts."""
    if keyframes_out:
        return KeyframeFiles(keyframes_out, em, keep=True)
    return KeyframeFiles(keyframes_dir(movie.spec.out), em)


def remove_keyframes_dir(out: str) -> None:
    """After the movie is in place: its own keyframes folder goes (a PNG sequence's sits
    beside the frames)."""
    import shutil
    folder = keyframes_dir(out)
    if os.path.isdir(folder):
        shutil.rmtree(folder, ignore_errors=True)


def _read_json(path: str):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write_json(path: str, data: dict) -> None:
    tmp = _tmp(path)
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


def _tmp(path: str) -> str:
    """A temporary name beside `path` (one run at a time writes a movie: its lock)."""
    folder, name = os.path.split(path)
    return os.path.join(folder, f".{name}.tmp")
