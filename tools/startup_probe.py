"""The child side of tools/startup_profile.py: runs a script (main.py, tools/first_start.py) as
its __main__ with timers around what a start spends its seconds on, and writes them as JSON.

    python -X importtime tools/startup_probe.py OUT.json SCRIPT [ARGS...]

Recorded, in seconds since this file started (the interpreter's own start is the parent's):
- spans: the functions named in SPANS (warm-ups, the reference orbit, the file write, the CUDA
  context…), wrapped right after their module loads, so `from m import f` elsewhere gets the timer;
- numba's cache loads, one per dispatcher and signature (CPU and CUDA caches alike): its name,
  target, whether the disk held it, milliseconds; they include the typing registries a first
  dispatch builds, which is what a first cached call costs;
- numba's compiles (its "numba:compile" event, raised only when the cache missed); on CUDA every
  call of the dispatcher's compile(), with whether a cache load served it.
The JSON is written at exit, os._exit included (main.py's quick exit and first_start.py use it).
"""
import time

T0 = time.perf_counter()

import importlib.abc  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import runpy  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

# module -> [(attribute path, label)]: what a start's phases are; a name missing in this version
# of the code is skipped (listed in the JSON as "unwrapped")
SPANS = {
    "cli.render": [("run_render", "command after parsing (run_render)")],
    "cli.environment": [("ensure_numba_cache", "numba cache folder check")],
    "cli.failures": [("resolve_backend", "backend chosen")],
    "cli.location": [("apply_location", "location file read")],
    "services.render": [("view_renderer", "renderer made"),
                        ("write_frame", "frame rendered and written")],
    "services.files": [("write_png", "file write (png encode)"), ("write_npy", "file write (npy)"),
                       ("StripWriter.finish", "file write (finish)")],
    "kernels.backend": [("cuda_status", "CUDA probe (cuda_status)")],
    "kernels.mandelbrot.frames.warm": [("compile_notice", "cache index check (compile_notice)")],
    "kernels.mandelbrot.renderer": [("Renderer.warmup", "warm-up: float renderer")],
    "kernels.mandelbrot.colouring.colourer": [("Colourer.warm", "warm-up: colour mappings")],
    "kernels.mandelbrot.frames.cpu_target": [("CpuTarget.escape", "escape pass (CPU)")],
    "kernels.mandelbrot.frames.gpu_target": [("GpuTarget.escape", "escape pass (GPU)")],
    "kernels.mandelbrot.deep_frames": [("DeepFrameRenderer.warmup", "warm-up: deep renderer")],
    "kernels.mandelbrot.reference.reference": [("ReferenceOrbit.extend", "reference orbit"),
                                          ("warm_engine", "warm-up: reference engine")],
    "kernels.mandelbrot.deep.table_ahead": [("warm", "warm-up: table ahead")],
    "kernels.mandelbrot.deep.renderer": [("DeepRenderer._reference",
                                          "reference (found or computed)")],
    "numba.cuda.cudadrv.devices": [("_Runtime._activate_context_for", "CUDA context")],
    "numba.cuda.cudadrv.driver": [("Driver.ensure_initialized", "CUDA driver init (cuInit)")],
    "explorer.app": [("MainWindow.__init__", "window built")],
}

_records = {"spans": [], "cache_loads": [], "compiles": [], "unwrapped": [], "script": None}
_lock = threading.Lock()
_local = threading.local()


def now() -> float:
    return time.perf_counter() - T0


def _timed(fn, label):
    """fn with its outermost call on each thread recorded under `label`."""
    def wrapper(*args, **kwargs):
        depth = getattr(_local, label, 0)
        setattr(_local, label, depth + 1)
        t = now()
        try:
            return fn(*args, **kwargs)
        finally:
            setattr(_local, label, depth)
            if depth == 0:
                with _lock:
                    _records["spans"].append({"label": label, "start": t, "ms": (now() - t) * 1e3,
                                              "thread": threading.current_thread().name})
    wrapper.__wrapped__ = fn
    for name in ("__name__", "__qualname__", "__doc__", "__module__"):
        try:
            setattr(wrapper, name, getattr(fn, name))
        except (AttributeError, TypeError):
            pass
    return wrapper


def _wrap(module, path: str, label: str) -> None:
    owner, _, name = path.rpartition(".")
    target = module
    for part in filter(None, owner.split(".")):
        target = getattr(target, part, None)
    raw = (target.__dict__ if isinstance(target, type) else vars(target)).get(name) \
        if target is not None else None
    if raw is None or not callable(raw):
        _records["unwrapped"].append(f"{module.__name__}.{path}")
        return
    setattr(target, name, _timed(raw, label))


def _cache_loads(module, target: str) -> None:
    """Times every load_overload of numba's per-function Cache (`target`: cpu or cuda)."""
    cls = getattr(module, "Cache", None)
    if cls is None or "load_overload" not in cls.__dict__:
        _records["unwrapped"].append(f"{module.__name__}.Cache.load_overload")
        return
    raw = cls.load_overload

    def load_overload(self, sig, target_context):
        t = now()
        result = raw(self, sig, target_context)
        func = getattr(self, "_py_func", None)
        name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', self._name)}"
        with _lock:
            _records["cache_loads"].append({"kernel": name, "target": target, "start": t,
                                            "ms": (now() - t) * 1e3, "hit": result is not None})
        return result
    cls.load_overload = load_overload


def _compile_events(module, target: str, kind: str) -> None:
    """numba's compile event (`kind`): raised around a compile that the cache did not spare."""
    starts = {}

    class Compiles(module.Listener):
        def on_start(self, event):
            starts[(id(event.data["dispatcher"]), threading.get_ident())] = now()

        def on_end(self, event):
            disp = event.data["dispatcher"]
            t = starts.pop((id(disp), threading.get_ident()), now())
            func = getattr(disp, "py_func", None)
            with _lock:
                _records["compiles"].append({
                    "kernel": f"{getattr(func, '__module__', '?')}."
                              f"{getattr(func, '__qualname__', repr(disp))}",
                    "target": target, "start": t, "ms": (now() - t) * 1e3})
    module.register(kind, Compiles())


def _cuda_compiles(module) -> None:
    """numba-cuda raises no event a listener may hear: its dispatcher's compile() is timed instead
    (a cache load inside it is in cache_loads too; "loaded" says whether one hit)."""
    cls = module.CUDADispatcher
    raw = cls.compile

    def compile(self, sig):
        depth = getattr(_local, "cuda_compile", 0)
        _local.cuda_compile = depth + 1
        t, hits = now(), sum(1 for c in _records["cache_loads"] if c["hit"])
        try:
            return raw(self, sig)
        finally:
            _local.cuda_compile = depth
            if depth == 0:
                func = getattr(self, "py_func", None)
                loaded = sum(1 for c in _records["cache_loads"] if c["hit"]) > hits
                with _lock:
                    _records["compiles"].append({
                        "kernel": f"{getattr(func, '__module__', '?')}."
                                  f"{getattr(func, '__qualname__', repr(self))}",
                        "target": "cuda", "start": t, "ms": (now() - t) * 1e3,
                        "loaded": loaded})
    cls.compile = compile


# module -> what to do once it has loaded
HOOKS = {"numba.core.caching": lambda m: _cache_loads(m, "cpu"),
         "numba.cuda.core.caching": lambda m: _cache_loads(m, "cuda"),
         "numba.core.event": lambda m: _compile_events(m, "cpu", "numba:compile"),
         "numba.cuda.dispatcher": _cuda_compiles}
for _mod, _spans in SPANS.items():
    HOOKS[_mod] = (lambda spans: lambda m: [_wrap(m, p, lab) for p, lab in spans])(_spans)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs HOOKS[name] right after module `name` executes, before anyone imports from it."""

    def find_spec(self, name, path=None, target=None):
        if name not in HOOKS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None and spec.loader is not None:
                loader = spec.loader
                run = loader.exec_module

                def exec_module(module, _run=run, _name=name):
                    _run(module)
                    try:
                        HOOKS[_name](module)
                    except Exception as exc:   # a probe must never break the command it times
                        _records["unwrapped"].append(f"{_name}: {exc!r}")
                loader.exec_module = exec_module
                return spec
        return None


_written = []


def dump(path: str) -> None:
    if _written:
        return
    _written.append(path)
    _records["end"] = now()
    with _lock, open(path, "w") as fh:
        json.dump(_records, fh)


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit("usage: startup_probe.py OUT.json SCRIPT [ARGS...]")
    out, script = os.path.abspath(sys.argv[1]), sys.argv[2]
    _records["script"] = [script] + sys.argv[3:]
    sys.meta_path.insert(0, _AfterImport())
    real_exit = os._exit

    def quick_exit(code):            # main.py's quick exit and first_start.py skip atexit
        dump(out)
        real_exit(code)
    os._exit = quick_exit
    import atexit
    atexit.register(dump, out)
    sys.argv = [script] + sys.argv[3:]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    _records["script_start"] = now()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
