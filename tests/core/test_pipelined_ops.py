"""Eager mode pipelines consecutive per-sample CPU ops sample by sample (`_executor._Chain`,
`_thread_pool.StagedJob`): same results and errors as running them one after the other."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np
import pytest
from _gated_op import GATE, gated
from _staged_op import HOLD, LOG, staged

import ndd_triton as ndd
from ndd_triton.runtime import thread_pool as _thread_pool
from ndd_triton.runtime.thread_pool import StagedJob, ThreadPool

N = 6
ELEMS = 6000  # 24 KB per float32 sample: the batches are worth the pool (>= 64 KB)


@pytest.fixture(autouse=True)
def _clean():
    HOLD.set()
    GATE.set()
    LOG.clear()
    yield
    HOLD.set()
    GATE.set()


def _batch(seed: int = 0):
    rs = np.random.default_rng(seed)
    return ndd.batch([rs.standard_normal(ELEMS + 7 * i).astype(np.float32) for i in range(N)])


def _arrays(b):
    return [np.asarray(b.select(i)) for i in range(b.batch_size)]


def _chain(x, fail=(0,) * N, hold=(0,) * N):
    a = staged(x, add=1.0, fail=ndd.batch(np.array(fail, np.int32)), hold=ndd.batch(
        np.array(hold, np.int32)))  # fmt: skip
    b = staged(a, add=2.0)
    c = staged(x, add=3.0)  # independent of a and b
    d = staged(b, add=4.0)
    return a, b, c, d


def test_pipelined_results_equal_one_op_at_a_time():
    x = _batch()
    with ndd.EvalMode.sync_cpu, ndd.EvalContext(num_threads=2):
        expected = [_arrays(r) for r in _chain(x)]
    with ndd.EvalMode.eager, ndd.EvalContext(num_threads=2):
        got = [_arrays(r) for r in _chain(x)]
    for g, e in zip(got, expected, strict=True):
        for gs, es in zip(g, e, strict=True):
            np.testing.assert_array_equal(gs, es)


def _wait_for(entry: tuple[float, int]) -> None:
    deadline = time.monotonic() + 20
    while entry not in LOG and time.monotonic() < deadline:
        time.sleep(0.002)
    assert entry in LOG, f"{entry} never ran"


def test_a_later_op_starts_before_the_earlier_one_has_finished():
    x = _batch()
    HOLD.clear()
    with ndd.EvalMode.eager, ndd.EvalContext(num_threads=2):
        *_, d = _chain(x, hold=(0, 0, 0, 0, 0, 1))  # sample 5 of the first op waits
        _wait_for((2.0, 0))  # b's first sample, while a is still running
        assert (1.0, 5) not in LOG
        HOLD.set()
        np.testing.assert_array_equal(_arrays(d)[5], _arrays(x)[5] + np.float32(1) + 2 + 4)


def _errors(mode_threads: int):
    x = _batch()
    HOLD.clear()  # a waits on sample 5 until all four ops are queued: one pipeline
    with ndd.EvalMode.eager, ndd.EvalContext(num_threads=mode_threads):
        a, b, c, d = _chain(x, fail=(0, 0, 1, 0, 1, 0), hold=(0, 0, 0, 0, 0, 1))
        if mode_threads > 1:  # d's first sample ran: all four ops joined the pipeline
            _wait_for((4.0, 0))
        HOLD.set()
        outcome = []
        for r in (a, b, c, d):
            try:
                r.evaluate()
                outcome.append(None)
            except Exception as e:
                outcome.append((type(e), str(e), type(e.__cause__), str(e.__cause__)))
        after = _arrays(staged(x, add=5.0))  # later calls are unaffected
    return outcome, c, after, x


def _gate_stages(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Record each stage added to a StagedJob (the number of stages it reads); a job's first
    stage waits (2 s at most) until 4 stages have joined, so pipelining does not depend on the
    caller outrunning the pool on a busy machine."""
    stages: list[int] = []
    add = StagedJob.add
    jobs: dict[int, list[Any]] = {}  # id -> [job, stages added, gate]

    def gated_add(self, fn, deps):
        stages.append(len(deps))
        entry = jobs.setdefault(id(self), [self, 0, threading.Event()])
        entry[1] += 1
        gate = entry[2]
        if entry[1] == 1:
            first = fn

            def fn(i, first=first, gate=gate):
                gate.wait(2.0)
                return first(i)
        elif entry[1] >= 4:
            gate.set()
        return add(self, fn, deps)

    monkeypatch.setattr(StagedJob, "add", gated_add)
    return stages


def test_failures_match_one_op_at_a_time_and_do_not_leak(monkeypatch):
    stages = _gate_stages(monkeypatch)
    pipelined, c, after, x = _errors(2)
    assert stages[:4] == [0, 1, 0, 1]  # a, b (reads a), c, d (reads b): one pipeline
    stages.clear()
    serial, _, _, _ = _errors(1)  # one thread: not pipelined
    assert stages == []
    assert pipelined == serial
    a_err, b_err, c_err, d_err = pipelined
    assert "sample 2 failed on purpose" in a_err[1]  # the lowest failing sample
    assert "during asynchronous execution of '_test_staged'" in b_err[1]
    assert "sample 2 failed on purpose" in b_err[3]
    assert c_err is None  # independent of the failed op
    np.testing.assert_array_equal(_arrays(c)[4], _arrays(x)[4] + np.float32(3))
    assert d_err is not None
    np.testing.assert_array_equal(after[2], _arrays(x)[2] + np.float32(5))


def test_other_work_waits_for_the_pipeline_and_keeps_call_order():
    x = _batch()
    with ndd.EvalMode.eager, ndd.EvalContext(num_threads=2) as ctx:
        a = staged(x, add=1.0)
        g = gated(a)  # blocks on I/O-like waits: never pipelined, runs after a
        b = staged(g, add=2.0)
        ctx._worker.drain()
        assert ctx._worker.idle
        np.testing.assert_array_equal(_arrays(b)[3], _arrays(x)[3] + np.float32(1) + np.float32(2))


def test_whole_batch_work_on_computed_inputs_runs_beside_the_pipeline():
    """A packed op (to_decibels) whose input was computed before its call runs on the worker
    thread while the pipeline before it still runs (it cannot need the pipeline's results);
    work that reads the pipeline still waits for it."""
    x = _batch()
    spectra = ndd.copy(ndd.batch([np.abs(s) + 1 for s in _arrays(x)]))
    spectra.evaluate()  # computed before the calls below: packed, on one buffer
    HOLD.clear()
    try:
        with ndd.EvalMode.eager, ndd.EvalContext(num_threads=2):
            a, b, _c, _d = _chain(x, hold=(0, 0, 0, 0, 0, 1))  # sample 5 of `a` waits
            _wait_for((2.0, 0))  # the pipeline runs
            db = ndd.to_decibels(spectra)
            after = ndd.to_decibels(ndd.copy(b))  # reads the pipeline: waits for it
            deadline = time.monotonic() + 20
            while not db._producer.inv.done and time.monotonic() < deadline:
                time.sleep(0.002)
            assert db._producer.inv.done, "held behind the pipeline"
            assert (1.0, 5) not in LOG  # the pipeline has not finished
            assert not after._producer.inv.done
            HOLD.set()
            expected = [10 * np.log10(s / s.max()) for s in _arrays(spectra)]
            for got, want in zip(_arrays(db), expected, strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
            np.testing.assert_array_equal(_arrays(a)[5], _arrays(x)[5] + np.float32(1))
            assert after.batch_size == N
    finally:
        HOLD.set()


def test_staged_job_runs_stages_added_late_and_skips_failed_samples():
    done: list[int] = []
    finished = threading.Event()
    pool = ThreadPool(2)
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def stage(tag: int, fail_at: int | None = None):
        def one(i: int) -> None:
            with lock:
                seen.append((tag, i))
            if i == fail_at:
                raise ValueError(f"{tag}/{i}")
        return one

    def complete(s: int) -> None:
        done.append(s)
        if len(done) == 3:
            finished.set()

    job = StagedJob(pool, 4, complete)
    job.add(stage(0, fail_at=1), ())
    deadline = time.monotonic() + 20
    while done != [0] and time.monotonic() < deadline:  # stage 0 complete: samples wait
        time.sleep(0.005)
    job.add(stage(1), (0,))
    job.add(stage(2), ())
    assert finished.wait(20)
    assert sorted(done) == [0, 1, 2]
    assert [str(e) for _, e in job.errors[0]] == ["0/1"]
    assert job.skipped == [False, True, False]
    assert (1, 1) not in seen and (2, 1) in seen  # stage 1 reads stage 0; stage 2 does not
    assert sorted(i for t, i in seen if t == 2) == [0, 1, 2, 3]
    pool.shutdown()


def test_largest_first_orders_by_cost_and_only_when_it_matters():
    assert _thread_pool.largest_first([3, 9, 1, 9, 5], 2) == [1, 3, 4, 0, 2]  # ties in order
    assert _thread_pool.largest_first([4, 4, 4, 4], 2) is None  # equal costs
    assert _thread_pool.largest_first([1, 2, 3], 4) is None  # a thread per sample
    assert _thread_pool.largest_first([1, 2, 3], 1) is None  # one thread


@pytest.mark.parametrize("runner", ["staged_job", "pool_run"])
def test_samples_start_in_the_given_order(runner):
    pool = ThreadPool(2)
    order = [4, 0, 3, 1, 2]
    started: list[int] = []
    lock = threading.Lock()
    first_two = threading.Barrier(2, timeout=20)  # both threads hold a sample, then go on

    def one(i: int) -> None:
        with lock:
            started.append(i)
            k = len(started)
        if k <= 2:
            first_two.wait()

    if runner == "pool_run":
        pool.run(one, 5, order=order)
    else:
        finished = threading.Event()
        StagedJob(pool, 5, lambda s: finished.set(), order).add(one, ())
        assert finished.wait(20)
    assert sorted(started[:2]) == [0, 4] and started[2:] == [3, 1, 2]
    pool.shutdown()


def test_ragged_batches_start_their_largest_samples_first(monkeypatch):
    """The run phase orders a ragged batch's samples largest first (pipelined or not) so the
    pool's threads finish together; results are those of any order."""
    orders: list[Any] = []
    init = StagedJob.__init__
    monkeypatch.setattr(StagedJob, "__init__", lambda self, pool, n, done, order=None: (
        orders.append(order), init(self, pool, n, done, order))[1])  # fmt: skip
    x = ndd.batch([np.full(ELEMS + 900 * k, k, np.float32) for k in (2, 5, 1, 4, 3, 0)])
    with ndd.EvalMode.eager, ndd.EvalContext(num_threads=2):
        y = staged(x, add=1.0)
        got = _arrays(y)
    assert orders == [[1, 3, 4, 0, 2, 5]]
    for k, sample in zip((2, 5, 1, 4, 3, 0), got, strict=True):
        np.testing.assert_array_equal(sample, np.full(ELEMS + 900 * k, k + 1, np.float32))


def test_stages_of_a_finished_job_release_their_buffers():
    pool = ThreadPool(2)
    finished = threading.Event()
    job = StagedJob(pool, 3, lambda s: finished.set())
    job.add(lambda i: None, ())
    assert finished.wait(20)
    assert job._fns[0] is _thread_pool._spent
    pool.shutdown()


def _program(seed: int, threads: int) -> list[list[np.ndarray] | str]:
    """A random mix of pipelinable ops, ops that cannot join (blocking, tiny, small batches)
    and drains, reading earlier results at random; returns every result's samples."""
    rs = np.random.default_rng(seed)
    sources = [_batch(seed), _batch(seed + 1)]
    small = ndd.batch([np.full((3,), i, np.float32) for i in range(N)])
    results = []
    with ndd.EvalMode.eager, ndd.EvalContext(num_threads=threads) as ctx:
        pool = list(sources)
        for _ in range(12):
            kind = rs.integers(0, 5)
            src = pool[rs.integers(0, len(pool))]
            if kind <= 1:
                fail = ndd.batch((rs.random(N) < 0.1).astype(np.int32))
                out = staged(src, add=float(rs.integers(1, 5)), fail=fail)
            elif kind == 2:
                out = gated(src)
            elif kind == 3:
                out = staged(small, add=1.0)  # tiny work: runs inline or alone
            else:
                ctx._worker.drain()
                continue
            pool.append(out)
            results.append(out)
        outcome = []
        for r in results:
            try:
                outcome.append(_arrays(r))
            except Exception as e:
                outcome.append(f"{type(e).__name__}: {e} <- {e.__cause__}")
    return outcome


@pytest.mark.parametrize("seed", range(24))
def test_random_programs_give_the_same_results_and_errors_as_one_thread(seed):
    got: list[list] = []
    worker = threading.Thread(target=lambda: got.append(_program(seed, 2)), daemon=True)
    worker.start()
    worker.join(60)
    assert got, "the pipelined program did not finish (executor hang?)"
    expected = _program(seed, 1)  # one thread: nothing is pipelined
    assert len(got[0]) == len(expected)
    for g, e in zip(got[0], expected, strict=True):
        if isinstance(e, str) or isinstance(g, str):
            assert g == e
            continue
        for gs, es in zip(g, e, strict=True):
            np.testing.assert_array_equal(gs, es)


def test_a_pool_shut_down_under_a_job_still_finishes_it():
    pool = ThreadPool(2)
    finished = threading.Event()
    ran: list[int] = []
    job = StagedJob(pool, 4, lambda s: finished.set() if s == 1 else None)
    job.add(ran.append, ())
    pool._threads().shutdown(wait=True)  # what set_num_threads does to the old default pool
    job.add(ran.append, (0,))  # cannot be scheduled there: runs on the calling thread
    assert finished.wait(20)
    assert sorted(ran) == [0, 0, 1, 1, 2, 2, 3, 3]


def _jpeg(seed: int, h: int, w: int) -> bytes:
    import io

    from PIL import Image

    rs = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:h, 0:w]
    pixels = np.stack([xx * 3 % 256, yy * 5 % 256, (xx + yy) % 256], -1)
    pixels = pixels + rs.integers(0, 30, (h, w, 3))
    buf = io.BytesIO()
    Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).save(buf, "JPEG", quality=90)
    return buf.getvalue()


def _rn50(root: str, threads: int, mode: ndd.EvalMode) -> list[Any]:
    """The RN50 training recipe on 3 batches; per batch the output, or the error message."""
    outcome: list[Any] = []
    rng = ndd.random.RNG(seed=3)
    with mode, ndd.EvalContext(num_threads=threads):
        reader = ndd.readers.File(file_root=root)
        for jpegs, _ in reader.next_epoch(batch_size=8):
            try:
                images = ndd.decoders.image(jpegs)
                images = ndd.random_resized_crop(images, size=48, rng=rng)
                flips = ndd.random.coin_flip(batch_size=8, rng=rng)
                images = ndd.flip(images, horizontal=flips)
                out = ndd.crop_mirror_normalize(images, mean=[120.0] * 3, std=[60.0] * 3)
                outcome.append(out.torch().numpy().copy())
            except RuntimeError as e:
                chain = []
                cause: BaseException | None = e
                while cause is not None:
                    chain.append(str(cause))
                    cause = cause.__cause__
                outcome.append(" <- ".join(chain))
    return outcome


def test_rn50_recipe_pipelined_equals_sync_and_a_corrupt_file_fails_only_its_batch(
        tmp_path, monkeypatch):  # fmt: skip
    (tmp_path / "c").mkdir()
    for i in range(24):
        data = _jpeg(i, 64 + i % 5, 80 + i % 7)
        if i == 11:
            data = data[: len(data) // 2]  # header intact: fails while decoding
        (tmp_path / "c" / f"{i:02d}.jpg").write_bytes(data)
    stages = _gate_stages(monkeypatch)
    pipelined = _rn50(str(tmp_path), 2, ndd.EvalMode.eager)
    assert len(stages) >= 8  # decode, rrc, flip, cmn of two good batches (at least) pipelined
    stages.clear()
    serial = _rn50(str(tmp_path), 1, ndd.EvalMode.eager)  # one thread: nothing pipelined
    synced = _rn50(str(tmp_path), 2, ndd.EvalMode.sync_cpu)
    assert stages == []
    assert isinstance(pipelined[1], str) and "11.jpg" in pipelined[1], pipelined[1]
    assert pipelined[1] == serial[1]
    assert "11.jpg" in synced[1]
    for k in (0, 2):  # the batch after the failed one is unaffected
        np.testing.assert_array_equal(pipelined[k], serial[k])
    # (sync mode stops at the failed decode, so batch 2 draws other random numbers there)
    np.testing.assert_array_equal(pipelined[0], synced[0])
