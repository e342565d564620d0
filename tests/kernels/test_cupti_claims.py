"""kernels/cupti_records.py's claim of a phase's records, with CUPTI's records made up here: a
phase whose launch has no kernel record yet is not timed from the records it has (it read a tenth
of its time so on an H200), it waits for the flush that brings the record, and after FLUSHES
flushes without it the caller keeps the phase's events."""
import enum
import types

import pytest

from kernels import cupti_records as cr


class Kind(enum.IntEnum):
    EXTERNAL_CORRELATION = 1
    CONCURRENT_KERNEL = 2
    MEMCPY = 3
    MEMSET = 4
    DRIVER = 5


class Cbid(enum.IntEnum):
    cuLaunchKernel = 10
    cuMemcpyDtoHAsync_v2 = 11
    cuEventRecord = 12
    cuCtxGetCurrent = 13


def rec(kind, corr, **kw):
    return types.SimpleNamespace(kind=kind, correlation_id=corr, **kw)


@pytest.fixture
def fake(monkeypatch):
    """A CUPTI whose flushes deliver the batches queued for them, one batch per flush."""
    batches = []
    cupti = types.SimpleNamespace(ActivityKind=Kind,
                                  activity_flush_all=lambda flag: cr._completed(
                                      batches.pop(0) if batches else []))
    monkeypatch.setattr(cr, "_cupti", cupti)
    monkeypatch.setattr(cr, "_gpu_calls", cr.gpu_calls(Cbid))
    for name in ("_intervals", "_external"):
        monkeypatch.setattr(cr, name, {})
    monkeypatch.setattr(cr, "_expected", set())
    return batches


def phase(pid, corr, start, end, cbid=Cbid.cuLaunchKernel):
    """A phase's launch: its API record, its external id, its kernel record."""
    return ([rec(Kind.DRIVER, corr, cbid=int(cbid)), rec(Kind.EXTERNAL_CORRELATION, corr,
                                                         external_id=pid)],
            [rec(Kind.CONCURRENT_KERNEL, corr, start=start, end=end)])


def test_only_launches_copies_and_sets_are_expected_to_leave_a_record():
    assert cr.gpu_calls(Cbid) == {Cbid.cuLaunchKernel, Cbid.cuMemcpyDtoHAsync_v2}


def test_a_phase_waits_for_its_kernels_record(fake):
    api1, kern1 = phase(1, 100, 0, 2_000_000)           # 2 ms
    api2, kern2 = phase(1, 101, 1_000_000, 9_000_000)   # the long kernel, overlapping: to 9 ms
    other = [rec(Kind.DRIVER, 102, cbid=int(Cbid.cuEventRecord)),
             rec(Kind.EXTERNAL_CORRELATION, 102, external_id=1)]   # no GPU record: none expected
    fake += [api1 + kern1 + api2 + other, kern2]        # the long kernel's record a flush later
    assert cr.busy_ms([1]) == {1: pytest.approx(9.0)}
    assert not cr._external and not cr._intervals and not cr._expected


def test_a_record_that_never_comes_leaves_the_phase_to_its_events(fake):
    api, _ = phase(2, 200, 0, 5_000_000)
    api3, kern3 = phase(3, 300, 0, 1_000_000)
    fake += [api + api3 + kern3]
    assert cr.busy_ms([2, 3]) == {3: pytest.approx(1.0)}
    assert not cr._external and not cr._expected         # nothing left behind either way


def test_a_phase_without_records_yet_is_left_out(fake):
    assert cr.busy_ms([4]) == {}
