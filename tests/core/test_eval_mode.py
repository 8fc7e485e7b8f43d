"""Eval modes: enum behaviour, overlap in eager, laziness in deferred, sync modes, errors."""

import threading

import numpy as np
import pytest
from _gated_op import CALLS, GATE, RAN_ON, gated

import ndd_triton as ndd
from ndd_triton import EvalMode


@pytest.fixture(autouse=True)
def _reset_gate():
    GATE.set()
    RAN_ON.clear()
    CALLS["count"] = 0
    yield
    GATE.set()


def test_enum_members_and_alias():
    assert [m.value for m in (EvalMode.deferred, EvalMode.eager, EvalMode.sync_cpu,
                              EvalMode.sync_full)] == [1, 2, 3, 4]
    assert EvalMode.default is EvalMode.eager
    assert EvalMode(2) is EvalMode.eager and EvalMode["sync_cpu"] is EvalMode.sync_cpu
    with pytest.raises(ValueError):
        EvalMode("eager")
    with pytest.raises(TypeError):
        EvalMode.eager < EvalMode.sync_cpu  # noqa: B015


def test_context_manager_stack_is_thread_local():
    assert EvalMode.current() is EvalMode.eager
    seen = []
    with EvalMode.sync_cpu:
        with EvalMode.deferred:
            assert EvalMode.current() is EvalMode.deferred
            t = threading.Thread(target=lambda: seen.append(EvalMode.current()))
            t.start()
            t.join()
        assert EvalMode.current() is EvalMode.sync_cpu
    assert seen == [EvalMode.eager]
    assert EvalMode.current() is EvalMode.eager


def _batch():
    return ndd.batch([np.arange(4, dtype=np.int32), np.arange(2, dtype=np.int32)])


def test_eager_returns_before_run_and_runs_on_executor():
    x = _batch()
    GATE.clear()
    result = gated(x)  # must return although the kernel is blocked
    assert CALLS["count"] == 0
    assert result.dtype == ndd.int32 and result.shape == [(4,), (2,)]  # metadata without waiting
    GATE.set()
    assert [t.torch().tolist() for t in result] == [[0, 1, 2, 3], [0, 1]]
    assert set(RAN_ON) == {"ndd-executor"}


def test_eager_tiny_work_on_finished_results_runs_inline_while_the_executor_is_busy():
    """Tiny work whose inputs are results of finished calls (not yet read) needs nothing that
    is queued: it runs on the caller at once, not behind the blocked executor (the detection
    recipe's bb_flip behind the image pipeline held crop_mirror_normalize out of it)."""
    with ndd.profile() as prof:  # (no dense fast path: the results stay pending objects)
        done = _batch() + 1  # tiny, idle executor: runs inline, not read yet
        assert done._storage is None
        assert done._producer.inv.done
        GATE.clear()
        blocked = gated(_batch())
        added = done + 1
        assert added._producer.inv.done
        assert CALLS["count"] == 0
    assert prof.records[-1].run_thread == threading.current_thread().name
    assert [t.torch().tolist() for t in added] == [[2, 3, 4, 5], [2, 3]]
    GATE.set()
    assert [t.torch().tolist() for t in blocked] == [[0, 1, 2, 3], [0, 1]]


def test_eager_tiny_gpu_work_waits_for_a_busy_executor():
    """Tiny GPU work runs on the caller only while the executor is idle: launched beside a
    running call it could reach the stream out of call order, so it is queued behind it."""
    tiny = ndd.as_batch([np.arange(6, dtype=np.uint8).reshape(1, 2, 3)], layout="HWC").gpu()
    tiny.evaluate()
    with ndd.profile() as prof:
        GATE.clear()
        blocked = gated(_batch())
        flipped = ndd.flip(tiny, horizontal=1)
        assert not flipped._producer.inv.done
        GATE.set()
        assert flipped.select(0).cpu().torch().tolist() == [[[3, 4, 5], [0, 1, 2]]]
    assert prof.records[-1].run_thread == "ndd-executor"
    assert [t.torch().tolist() for t in blocked] == [[0, 1, 2, 3], [0, 1]]


def test_sync_cpu_runs_on_caller_before_return():
    with EvalMode.sync_cpu:
        gated(_batch())
    assert set(RAN_ON) == {threading.current_thread().name}


def test_deferred_runs_only_when_read():
    with EvalMode.deferred:
        result = gated(_batch())
        assert CALLS["count"] == 0
    assert CALLS["count"] == 0
    result.evaluate()
    assert CALLS["count"] == 2  # one kernel call per sample
    with EvalMode.deferred:
        kept = gated(_batch())
        gated(_batch())  # never consumed and dropped: may be skipped
    ndd.EvalContext.current().evaluate_all()
    assert CALLS["count"] == 4
    assert kept.select(1).torch().tolist() == [0, 1]


def test_eager_error_surfaces_at_read_with_cause_and_callsite():
    result = gated(_batch(), fail=1)
    with pytest.raises(RuntimeError, match="during asynchronous execution of '_test_gated'") as info:
        result.evaluate()
    assert "test_eval_mode.py" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)
    assert "failed on purpose" in str(info.value.__cause__)
    ok = gated(_batch())  # the worker survived
    assert ok.select(1).torch().tolist() == [0, 1]


def test_deferred_error_message():
    with EvalMode.deferred:
        result = gated(_batch(), fail=1)
    with pytest.raises(RuntimeError, match="during deferred evaluation") as info:
        np.asarray(result.select(0))
    assert "failed on purpose" in str(info.value.__cause__)


@pytest.mark.parametrize("mode", [EvalMode.sync_cpu, EvalMode.sync_full])
def test_sync_modes_raise_at_the_call(mode):
    with mode, pytest.raises(RuntimeError, match="failed on purpose"):
        gated(_batch(), fail=1)


def test_failed_op_does_not_poison_dependents_or_later_calls():
    bad = gated(_batch(), fail=1)
    dependent = ndd.flip(ndd.batch([np.zeros((1, 1, 1))]))
    assert dependent.select(0).shape == (1, 1, 1)
    chained = gated(bad)
    with pytest.raises(RuntimeError, match="failed on purpose"):
        chained.evaluate()
    assert gated(_batch()).select(0).torch().tolist() == [0, 1, 2, 3]


def test_external_input_evaluates_synchronously():
    result = gated(np.arange(3, dtype=np.int32))
    assert CALLS["count"] == 1  # numpy input: run before the call returned
    assert set(RAN_ON) == {threading.current_thread().name}
    assert result.torch().tolist() == [0, 1, 2]


def test_same_bytes_in_all_modes():
    x = ndd.batch([np.random.default_rng(0).integers(0, 255, (5, 7, 3), dtype=np.uint8)])
    outs = []
    for mode in (EvalMode.deferred, EvalMode.eager, EvalMode.sync_cpu, EvalMode.sync_full):
        with mode:
            outs.append(np.asarray(ndd.flip(x.gpu(), vertical=1).cpu().select(0)).tobytes())
    assert len(set(outs)) == 1
