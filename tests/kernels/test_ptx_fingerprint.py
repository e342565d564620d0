"""tools/ptx_fingerprint.py turns the argument types it records under the simulator back into
numba types for the compile: every kind of argument a kernel launch passes survives the trip."""
import numpy as np
import numba
import pytest

from tools.ptx_fingerprint import _parse_type


@pytest.mark.parametrize("value", [
    np.zeros((2, 3)), np.zeros(4, np.int32), np.zeros((2, 2), np.uint32)[:, :1],
    np.zeros(3, np.float32), 1.5, 7, True, np.float32(1), np.int64(2), np.uint8(3)])
def test_a_recorded_type_parses_back_to_itself(value):
    ty = numba.typeof(value)
    assert _parse_type(str(ty)) == ty


def test_a_read_only_array_keeps_its_flag():
    a = np.zeros(3)
    a.setflags(write=False)
    ty = numba.typeof(a)
    assert _parse_type(str(ty)) == ty
