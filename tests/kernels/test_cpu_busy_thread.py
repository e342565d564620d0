"""CPU vector ops timed beside a busy Python thread (issue 39): a thread running plain Python loops,
as a repainting GUI thread does, must not enter a CPU op's time.

The points are measured by the runner the sweep and the bench use (kernels/vector/cpu_process.py:
a helper process, whose GIL no thread of this one holds). Before, beside the busy thread each call
began after a wait for the GIL, its arrays cold by then (numba's add at 2^20 0.067 -> 0.50 ms in
CI, NumPy's 0.150 -> 0.34 ms). The bounds are the issue's: NumPy within 1.10x of its time alone or
0.02 ms; numba's parallel loop, whose threads really share the cores with the busy one, within
2.5x or 0.05 ms. Where they fail for want of hardware (on a VM the busy thread may share a
physical core with the measured one), the same busy loop in another process stands as the
control: it takes the same share of the machine, so a time that nothing else enters comes within
1.10x (NumPy) or 1.25x (numba) of the time beside it.

The Mandelbrot frames' loops run in the window's own process: there a time beside the busy thread
must be all work, no longer than the loop threads' CPU time in it (cpu_chunks)."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys

import numpy as np
import pytest

from kernels import backend as backends
from kernels.vector.registry import implementations
from kernels.vector.cpu_process import point_runner
from tools.busy_thread_bench import Busy       # the bench's busy thread, the same loop

BOUNDS = {"numpy": (1.10, 0.02), "cpu-numba": (2.5, 0.05)}
CONTROL = {"numpy": (1.10, 0.02), "cpu-numba": (1.25, 0.05)}


class BusyProcess:
    """The same loop in another process: the machine's share without the GIL."""

    def __enter__(self):
        self.proc = subprocess.Popen([sys.executable, "-c", "n = 0\nwhile True:\n    n += 1"])
        return self

    def __exit__(self, *exc):
        self.proc.kill()
        self.proc.wait()


def _median_ms(runner, impl, n):
    return statistics.median(runner.measure("add", impl, "kernel", n, repeats=7).kernel_ms
                             for _ in range(3))


CASES = [(name, log2n) for name in sorted(BOUNDS) for log2n in (12, 16, 20)]


@pytest.mark.parametrize("name,log2n", CASES)
def test_a_cpu_op_beside_a_busy_python_thread_keeps_its_time(name, log2n):
    # the busy thread must be the one thing competing: on a machine already running other work
    # (a virtual CPU's stolen time counts as its threads' CPU time) the comparison means nothing
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > max(1.5, 0.75 * cores):
        pytest.skip(f"the machine is busy already (load {load:.1f} on {cores} cores)")
    be = backends.resolve("cpu")
    impl = next(i for i in implementations(be) if i.name == name)
    runner = point_runner(be, repeats=7, budget_s=5.0)
    n = 1 << log2n
    ratio_max, slack = BOUNDS[name]
    control_max, control_slack = CONTROL[name]
    seen = []
    for _ in range(4):       # a machine busy with other work may spoil one try, not four
        alone = _median_ms(runner, impl, n)
        with Busy():
            busy = _median_ms(runner, impl, n)
        if busy <= alone * ratio_max or busy - alone <= slack:
            return
        with BusyProcess():
            control = _median_ms(runner, impl, n)
        seen.append((alone, busy, control))
        if busy <= control * control_max or busy - control <= control_slack:
            return
    # contention on a 2-core VM is bimodal (numba's add at 2^20 beside a busy thread or process:
    # 1.00x for a while, then 2.6-2.9x), and the mode may change between the two halves of a
    # try: the busy thread's best try stands against the busy process's worst; a wait for the
    # GIL (milliseconds) would still be far above it
    best, worst = min(b for _, b, _ in seen), max(c for _, _, c in seen)
    if best <= worst * control_max or best - worst <= control_slack:
        return
    pytest.fail(f"{name} at N = 2^{log2n}: (alone, beside a busy thread, beside a busy process) "
                f"ms {seen}")


@pytest.mark.parametrize("log2n", [16, 20])
def test_an_in_process_loop_beside_a_busy_thread_shows_only_its_work(log2n):
    calls = _work_beside_busy(1 << log2n)
    assert all(span <= cpu * 1.05 + 0.01 for span, cpu in calls), calls


def _work_beside_busy(n: int) -> list[tuple[float, float]]:
    """(the span numba's add shows, its threads' CPU time in it) ms, 21 calls beside a busy
    thread, through the same loop the runner times."""
    from kernels.cpu_chunks import WORKERS, control, cpu_ms, stamped
    from kernels.vector.cpu import ADD, PIECE, _cpu_vec
    a = np.ones(n, np.float32)
    b, out = a.copy(), np.empty_like(a)
    ctl = control()
    parts = np.zeros(max(1, min(n // PIECE, 4 * int(ctl[WORKERS]))))
    run = stamped(_cpu_vec)
    run(np.int64(ADD), a, b, out, np.float32(1), parts, ctl)
    with Busy():
        return [(run(np.int64(ADD), a, b, out, np.float32(1), parts, ctl), cpu_ms(ctl))
                for _ in range(21)]


CHILD = """
import statistics, sys, threading
import numpy as np
from kernels.vector import cpu
ops = cpu.numba_ops()
a = np.ones(1 << 12, np.float32); b = a.copy(); c = a.copy()
run = lambda: ops["add"]([a, b], c, 1.0)
run()
alone = statistics.median(run() for _ in range(15))
stop = threading.Event()
def busy():
    k = 0
    while not stop.is_set():
        for i in range(2000):
            k += i
worst = 0.0
for _ in range(4):                  # each new busy thread meets the GIL afresh
    stop.clear()
    t = threading.Thread(target=busy, daemon=True)
    t.start()
    worst = max(worst, statistics.median(run() for _ in range(15)))
    stop.set()
    t.join()
print(alone, worst)
"""


def test_no_fresh_process_counts_the_wait_for_the_gil():
    """Whether a process falls into waiting for the GIL after every parallel region is a matter of
    how its threads meet the GIL (about one busy thread in five, on the clock around the call):
    five fresh processes, each numba's `add` at 2^12 alone and beside four busy threads in turn,
    the worst kept. A wait would be milliseconds; the loop itself is microseconds."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    seen = []
    for _ in range(5):
        out = subprocess.run([sys.executable, "-c", CHILD], cwd=root, env=env,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        alone, busy = (float(x) for x in out.stdout.split())
        seen.append((alone, busy))
    assert all(busy - alone < 0.5 for alone, busy in seen), seen
