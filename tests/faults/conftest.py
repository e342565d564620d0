"""Fixtures of the fault-injection tests (helpers in faultkit.py)."""
import pytest
from faultkit import Child


@pytest.fixture
def child():
    """child(code, env=None, args=()) starts a Child; any still running is killed afterwards."""
    made = []

    def start(code, env=None, args=()):
        c = Child(code, env, args)
        made.append(c)
        return c
    yield start
    for c in made:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.communicate()
