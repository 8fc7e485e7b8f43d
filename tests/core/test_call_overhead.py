"""The per-call fast paths: prepare's plan cache and eager mode's inline run of tiny work.

Both must be invisible: same results, same errors, same random draws as the slow paths.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from _check import raises_at_call

import ndd_triton as ndd
from ndd_triton.runtime import plans as _plans


def _batch(shape=(4, 5, 3), n=3, dtype=np.uint8):
    rng = np.random.default_rng(0)
    return ndd.as_batch([rng.integers(0, 200, shape).astype(dtype) for _ in range(n)],
                        layout="HWC"[-len(shape):])


def _arrays(result):
    return [np.asarray(t) for t in result]


def test_plan_cache_hits_and_keeps_results_exact():
    b = _batch()
    _plans.PLANS.clear()
    first = _arrays(ndd.flip(b, horizontal=1))
    assert len(_plans.PLANS) == 1
    second = _arrays(ndd.flip(b, horizontal=1))  # served by the cached plan
    assert len(_plans.PLANS) == 1
    expected = [np.asarray(t)[:, ::-1] for t in b]
    for got in (first, second):
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("mode", ["eager", "sync_cpu", "deferred"])
def test_plan_cache_distinguishes_argument_values_types_and_inputs(mode):
    b = _batch()
    with getattr(ndd.EvalMode, mode):
        np.testing.assert_array_equal(np.asarray(ndd.flip(b, horizontal=1).select(0)),
                                      np.asarray(b.select(0))[:, ::-1])
        np.testing.assert_array_equal(np.asarray(ndd.flip(b, horizontal=0).select(0)),
                                      np.asarray(b.select(0)))
        # True and 1 hash alike; the key also holds the value types (horizontal defaults to 1).
        np.testing.assert_array_equal(np.asarray(ndd.flip(b, horizontal=True, vertical=1)
                                                 .select(0)),
                                      np.asarray(b.select(0))[::-1, ::-1])
        np.testing.assert_array_equal(np.asarray(ndd.flip(b, horizontal=False, vertical=1)
                                                 .select(0)),
                                      np.asarray(b.select(0))[::-1])
        # Lists are keyed by their items.
        t1 = ndd.transpose(b, perm=[2, 0, 1])
        t2 = ndd.transpose(b, perm=[1, 0, 2])
        assert t1.select(0).shape == (3, 4, 5) and t2.select(0).shape == (5, 4, 3)
        # Same arguments, other input dtype / rank / batch size: other plans.
        f = ndd.cast(b, dtype=ndd.float32)
        g = ndd.cast(_batch(dtype=np.int16), dtype=ndd.float32)
        h = ndd.cast(_batch(shape=(4, 5), n=2), dtype=ndd.float32)
        assert f.dtype == g.dtype == ndd.float32
        assert h.batch_size == 2 and h.select(0).shape == (4, 5)
        np.testing.assert_array_equal(np.asarray(g.select(1)),
                                      np.asarray(_batch(dtype=np.int16).select(1), np.float32))


def test_plan_cache_still_validates_shapes_every_call():
    a = _batch(shape=(4, 5, 3))
    c = _batch(shape=(4, 6, 3))
    (a + a).evaluate()
    with raises_at_call(ValueError, match="broadcast"):
        a + c


def test_plan_cache_does_not_reuse_random_draws():
    b = _batch(n=8)
    rng = ndd.random.RNG(seed=5)
    draws = [np.asarray(ndd.random.coin_flip(batch_size=8, rng=rng).torch()) for _ in range(4)]
    assert len({d.tobytes() for d in draws}) > 1
    # A mirror driven by per-sample random args is not cached on its Batch argument.
    flips = ndd.random.coin_flip(batch_size=8, rng=ndd.random.RNG(seed=1))
    out = ndd.flip(b, horizontal=flips)
    for got, src, f in zip(_arrays(out), b, np.asarray(flips.torch()), strict=True):
        np.testing.assert_array_equal(got, np.asarray(src)[:, ::-1] if f else np.asarray(src))


def test_eager_runs_tiny_work_inline_when_the_worker_is_idle():
    b = _batch()
    b.evaluate()
    with ndd.EvalMode.eager, ndd.profile() as prof:
        ndd.flip(b, horizontal=1).evaluate()
    assert prof.records[-1].run_thread == threading.current_thread().name


def test_eager_runs_tiny_gpu_work_inline_when_the_worker_is_idle():
    """A tiny GPU call's host work (the launches) runs on the caller when the worker is idle:
    the hop to the worker thread costs more (perf/README.md, "GPU path host time"); a large
    one goes to the worker, so the caller prepares the next call meanwhile."""
    tiny = _batch().gpu()
    big = ndd.batch([np.zeros((128, 128, 3), np.uint8)] * 4, layout="HWC").gpu()
    tiny.evaluate()
    big.evaluate()
    with ndd.EvalMode.eager, ndd.profile() as prof:
        out = ndd.flip(tiny, horizontal=1)
        out.evaluate()
        assert prof.records[-1].run_thread == threading.current_thread().name
        ndd.flip(big, horizontal=1).evaluate()
        assert prof.records[-1].run_thread != threading.current_thread().name
    for got, src in zip(_arrays(out.cpu()), _arrays(tiny.cpu()), strict=True):
        np.testing.assert_array_equal(got, src[:, ::-1])


def test_eager_inline_errors_surface_at_the_read():
    b = _batch()
    with ndd.EvalMode.eager:
        result = b // ndd.as_batch([np.zeros((4, 5, 3), np.uint8)] * 3, layout="HWC")
        with pytest.raises(ValueError, match="asynchronous execution") as info:
            result.evaluate()
    assert isinstance(info.value.__cause__, ValueError)
    assert "division by zero" in str(info.value.__cause__)
    np.testing.assert_array_equal(np.asarray(ndd.flip(b, horizontal=0, vertical=1).select(0)),
                                  np.asarray(b.select(0))[::-1])


def test_eager_sends_large_work_to_the_worker():
    big = ndd.batch([np.zeros((128, 128, 3), np.uint8)] * 4, layout="HWC")  # not external data
    with ndd.EvalMode.eager, ndd.profile() as prof:
        ndd.flip(big, horizontal=1).evaluate()
    assert prof.records[-1].run_thread != threading.current_thread().name


def test_pool_runs_every_sample_once_and_raises_the_lowest_failing_one():
    from ndd_triton.runtime.thread_pool import ThreadPool

    pool = ThreadPool(2)
    seen: list[int] = []
    lock = threading.Lock()

    def record(i: int) -> None:
        with lock:
            seen.append(i)

    pool.run(record, 50)
    assert sorted(seen) == list(range(50))

    def fail(i: int) -> None:
        if i in (7, 31):
            raise ValueError(f"sample {i}")

    with pytest.raises(ValueError, match="sample 7"):
        pool.run(fail, 40)
    pool.run(record, 3)  # the pool survives
    pool.shutdown()


def test_pool_with_the_caller_helping_keeps_num_threads_at_once():
    """`caller_helps`: the caller is one of the `num_threads` threads (one pool thread woken for
    a pool of 2), every sample runs once, the lowest failing sample's error is raised."""
    from ndd_triton.runtime.thread_pool import ThreadPool

    pool = ThreadPool(2)
    threads: dict[int, str] = {}
    lock = threading.Lock()
    barrier = threading.Barrier(2, timeout=10)

    def record(i: int) -> None:
        if i < 2:
            barrier.wait()  # samples 0 and 1 run at once, on two threads
        with lock:
            threads[i] = threading.current_thread().name

    pool.run(record, 30, caller_helps=True)
    assert sorted(threads) == list(range(30))
    names = set(threads.values())
    assert threading.current_thread().name in names and len(names) == 2

    def fail(i: int) -> None:
        if i in (5, 22):
            raise ValueError(f"sample {i}")

    with pytest.raises(ValueError, match="sample 5"):
        pool.run(fail, 40, caller_helps=True)
    pool.shutdown()


def test_sync_cpu_shortcut_raises_at_the_call_and_gives_exact_results():
    b = _batch()
    zeros = ndd.as_batch([np.zeros((4, 5, 3), np.uint8)] * 3, layout="HWC")
    ones = ndd.as_batch([np.ones((4, 5, 3), np.uint8)] * 3, layout="HWC")
    with ndd.EvalMode.sync_cpu:
        (b // ones).evaluate()  # caches the plan, so the next calls take the shortcut
        with pytest.raises(ValueError, match="division by zero"):
            b // zeros
        ndd.reductions.sum(b)  # first call of this signature: the normal path
        total = ndd.reductions.sum(b)
        assert total._storage is not None  # computed before the call returned
    for got, src in zip(_arrays(total), b, strict=True):
        assert got == np.asarray(src).sum(dtype=np.uint64)
    with ndd.EvalMode.sync_cpu:
        single = ndd.flip(b.select(1), horizontal=1)
    np.testing.assert_array_equal(np.asarray(single), np.asarray(b.select(1))[:, ::-1])


def test_numpy_backed_results_export_and_move_like_any_batch():
    import torch

    b = _batch()
    with ndd.EvalMode.sync_cpu:
        ndd.flip(b, horizontal=1)
        out = ndd.flip(b, horizontal=1)  # a NumPy-backed storage from the shortcut
    assert out._storage is not None and out._storage._dense_np is not None
    expected = np.stack([np.asarray(t)[:, ::-1] for t in b])
    np.testing.assert_array_equal(out.torch().numpy(), expected)
    np.testing.assert_array_equal(torch.from_dlpack(out.select(2)).numpy(), expected[2])
    np.testing.assert_array_equal(np.asarray(out.select(1)), expected[1])
    storage = out._storage
    assert storage.offsets.tolist() == [0, 60, 120] and storage.buffer.numel() == 180
    moved = out.gpu().cpu()
    np.testing.assert_array_equal(np.stack([np.asarray(t) for t in moved]), expected)
    chained = ndd.flip(out, horizontal=1)  # an input that is NumPy-backed already
    np.testing.assert_array_equal(np.stack([np.asarray(t) for t in chained]),
                                  np.stack([np.asarray(t) for t in b]))


@pytest.mark.parametrize("mode", ["eager", "sync_cpu", "deferred"])
def test_tensor_inputs_use_plans_and_stay_exact(mode):
    src = np.arange(60, dtype=np.uint8).reshape(4, 5, 3)
    t = ndd.as_tensor(src, layout="HWC")
    b = _batch(n=2)
    with getattr(ndd.EvalMode, mode):
        for _ in range(3):  # first call builds the plan, later ones reuse it
            out = ndd.flip(t, horizontal=1)
            np.testing.assert_array_equal(np.asarray(out), src[:, ::-1])
            chained = ndd.flip(ndd.flip(t, horizontal=1), horizontal=1)  # a pending Tensor input
            np.testing.assert_array_equal(np.asarray(chained), src)
            mixed = b + t  # a Tensor broadcast against a Batch
            for got, s in zip(_arrays(mixed), b, strict=True):
                np.testing.assert_array_equal(got, np.asarray(s) + src)


def test_plan_cache_reads_argument_like_inputs_on_every_call():
    """Decoders take their encoded input as host values: a cached plan must not reuse them."""
    import io

    from PIL import Image

    def jpeg(seed: int, h: int, w: int) -> np.ndarray:
        rs = np.random.default_rng(seed)
        buf = io.BytesIO()
        Image.fromarray(rs.integers(0, 255, (h, w, 3)).astype(np.uint8)).save(buf, "JPEG")
        return np.frombuffer(buf.getvalue(), np.uint8).copy()

    def expected(data: np.ndarray) -> np.ndarray:
        return np.asarray(Image.open(io.BytesIO(data.tobytes())).convert("RGB"))

    _plans.PLANS.clear()
    one = [jpeg(1, 8, 10), jpeg(2, 12, 6)]
    two = [jpeg(3, 5, 7), jpeg(4, 9, 9)]
    for batch in (one, two, one):
        out = ndd.decoders.image(ndd.as_batch(batch))
        assert out.shape == [expected(d).shape for d in batch]
        for got, data in zip(_arrays(out), batch, strict=True):
            np.testing.assert_array_equal(got, expected(data))
    assert len(_plans.PLANS) == 1  # one signature, one plan, three exact calls
    image = ndd.as_batch([np.arange(60, dtype=np.uint8).reshape(5, 4, 3)] * 2, layout="HWC")
    for start in ([1, 2], [0, 3]):  # slice's positional anchor is argument-like too
        anchor = ndd.as_tensor(np.array(start, np.int64))
        got = _arrays(ndd.slice(image, anchor, ndd.as_tensor(np.array([2, 1], np.int64)),
                                normalized_anchor=False, normalized_shape=False))
        want = np.arange(60, dtype=np.uint8).reshape(5, 4, 3)[start[1]:start[1] + 1,
                                                              start[0]:start[0] + 2]
        np.testing.assert_array_equal(got[0], want)


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("mode", ["eager", "sync_cpu"])
def test_plan_cache_reads_batch_arguments_on_every_call(device, mode):
    """Per-sample arguments given as batches (another op's results) are keyed by what they
    are and converted on every call: one plan, each call's own values (a uniform first call
    included), the slow path's errors."""
    b = _batch()
    b = b.gpu() if device == "gpu" else b
    expected = [np.asarray(t) for t in _batch()]
    _plans.PLANS.clear()
    with getattr(ndd.EvalMode, mode):
        for flags in ([1, 1, 1], [0, 1, 0], [1, 0, 1], [0, 0, 0], [0, 1, 0]):
            coins = ndd.as_batch([np.array(f, np.int32) for f in flags])
            out = _arrays(ndd.flip(b, horizontal=coins).cpu())
            for got, want, f in zip(out, expected, flags, strict=True):
                np.testing.assert_array_equal(got, want[:, ::-1] if f else want)
        flips = [p for p in _plans.PLANS.values() if p.schema.name == "flip"]
        assert len(flips) == 1 and flips[0].batch_args == (0,)
        two = ndd.as_batch([np.array(1, np.int32)] * 2)
        with raises_at_call(ValueError, match="Inconsistent batch size.*'horizontal'"):
            ndd.flip(b, horizontal=two)
        def crop(x: float) -> list[np.ndarray]:
            pos = ndd.as_batch([np.array(x, np.float32)] * 3)
            return _arrays(ndd.crop(b, crop=[2, 2], crop_pos_x=pos).cpu())

        crop(1.0)  # the plan
        for x in (0.0, 1.5, 0.5):  # its calls check and use each call's values
            if x > 1:
                with raises_at_call(RuntimeError, match="'crop_pos_x' sample 0: must be in"):
                    crop(x)
                continue
            fast = crop(x)
            _plans.PLANS.clear()
            slow = crop(x)  # (a new plan)
            for f, w in zip(fast, slow, strict=True):
                np.testing.assert_array_equal(f, w)
        assert not np.array_equal(crop(0.0)[0], crop(1.0)[0])
        assert any(p.schema.name == "crop" and p.batch_args for p in _plans.PLANS.values())


def test_streaming_kernel_stays_on_one_thread_below_its_pool_minimum(monkeypatch):
    """A kernel registered with `pool_min_bytes` (preemphasis_filter: a pass or two over memory)
    runs a smaller batch on the calling thread only; a larger one goes to the pool."""
    import dataclasses

    from ndd_triton.kernels import _registry
    from ndd_triton.ops import preemphasis_filter
    from ndd_triton.runtime.plans import PLANS

    entry = _registry.lookup(preemphasis_filter.schema, "cpu")
    threads: set[str] = set()
    meet: list[threading.Barrier] = []

    def spy(out, inp, arg):
        threads.add(threading.current_thread().name)
        if meet and arg.index < 2:
            meet[0].wait()  # pooled: samples 0 and 1 run at once, on two threads
        entry.fn(out, inp, arg)

    signals = [np.random.default_rng(k).random(20_000 + k).astype(np.float32) for k in range(8)]
    want = [np.asarray(s) for s in ndd.preemphasis_filter(ndd.as_batch(signals))]
    before = ndd.get_num_threads()
    ndd.set_num_threads(2)
    try:
        for limit, pooled in ((entry.pool_min_bytes, False), (0, True)):
            monkeypatch.setitem(_registry._KERNELS, ("preemphasis_filter", "cpu"),
                                dataclasses.replace(entry, fn=spy, pool_min_bytes=limit))
            PLANS.clear()
            threads.clear()
            meet[:] = [threading.Barrier(2, timeout=10)] if pooled else []
            with ndd.EvalMode.sync_cpu:
                got = ndd.preemphasis_filter(ndd.as_batch(signals))
            for g, w in zip(got, want, strict=True):
                np.testing.assert_array_equal(np.asarray(g), w)
            if pooled:
                assert len(threads) == 2, threads
            else:
                assert threads == {threading.current_thread().name}, threads
    finally:
        ndd.set_num_threads(before)
        PLANS.clear()
