"""Long headless work on a worker thread while the main thread waits for Ctrl+C (--render,
posters, --movie)."""
from __future__ import annotations

import threading


def run_interruptibly(work, token, grace_s: float = 5.0, tick=None):
    """Run work() on a worker thread while this (the main) thread waits for Ctrl+C: Python sees
    a signal only between its own bytecodes, never inside a compiled kernel, so the render runs
    where it cannot hold the signal up. On Ctrl+C the token is cancelled (the kernels stop within
    a fraction of a second), the worker is given `grace_s` to end (and to remove its temporary
    file), and KeyboardInterrupt is raised here. The worker's own exception is raised here too.
    `tick()` is called on this thread between its waits (a progress bar's redraw)."""
    box = {}
    done = threading.Event()      # not Thread.join: before Python 3.12 a join interrupted by
    #                               Ctrl+C leaves the thread marked as ended while it still runs

    def run():
        try:
            box["result"] = work()
        except BaseException as exc:  # handed to the main thread, which raises it
            box["error"] = exc
        finally:
            done.set()

    try:
        # inside the try: Ctrl+C may land while start() waits for the worker to begin
        threading.Thread(target=run, name="render", daemon=True).start()
        while not done.wait(0.1):
            if tick is not None:
                tick()
    except KeyboardInterrupt:
        token.cancel()
        done.wait(grace_s)
        raise
    if "error" in box:
        raise box["error"]
    return box.get("result")
