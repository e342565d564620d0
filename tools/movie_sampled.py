"""A `main.py` command run in this process with every thread sampled (tools/thread_sampler.py):
where a keyframe movie's worker thread spends the time that the GPU waits (the movie is bound by
that one thread while the GPU idles half the time).

    PYTHONPATH=. python tools/movie_sampled.py REPORT -- --movie OUT --keyframes ...
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from tools.thread_sampler import ThreadSampler  # noqa: E402


def main() -> int:
    report, args = sys.argv[1], sys.argv[sys.argv.index("--") + 1:]
    sampler = ThreadSampler(float(os.environ.get("SAMPLE_S", "0.002"))).start()
    import main as app
    try:
        return app.main(args)
    finally:
        sampler.stop()
        with open(report, "w") as out:
            sampler.report(out, top=40)


if __name__ == "__main__":
    sys.exit(main())
