"""What `--render` run as a program starts differently (cli/render_start.py): GPU phases timed by
CUDA events instead of CUPTI, and the GPU's context opened ahead; main.main() called by a test
changes neither."""
import argparse

import pytest

from cli import quick_exit, render_start
from kernels import context_ahead, timing


@pytest.fixture
def program(monkeypatch):
    monkeypatch.setitem(quick_exit._state, "program", True)
    monkeypatch.delenv("GPU_EXPLORER_TIMING", raising=False)
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    before = timing.method_setting()
    started = []
    monkeypatch.setattr(context_ahead, "start", lambda: started.append(True))
    yield started
    timing.set_method(before)


@pytest.mark.parametrize("choice, ahead", [("cuda", True), ("auto", True), ("cpu", False)])
def test_as_a_program(program, choice, ahead):
    timing.set_method("auto")
    render_start.start_render(argparse.Namespace(backend=choice))
    assert timing.method_setting() == "events"
    assert program == ([True] if ahead else [])


def test_a_timing_method_asked_for_stays(program, monkeypatch):
    monkeypatch.setenv("GPU_EXPLORER_TIMING", "cupti")
    timing.set_method("cupti")
    render_start.start_render(argparse.Namespace(backend="cuda"))
    assert timing.method_setting() == "cupti" and program == [True]


def test_the_simulator_opens_no_context(program, monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    render_start.start_render(argparse.Namespace(backend="cuda"))
    assert program == []


def test_nothing_when_called_by_a_test(program, monkeypatch):
    monkeypatch.setitem(quick_exit._state, "program", False)
    timing.set_method("auto")
    render_start.start_render(argparse.Namespace(backend="cuda"))
    assert timing.method_setting() == "auto" and program == []
