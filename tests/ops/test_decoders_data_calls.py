"""GPU decoder calls through `runtime/data_calls.py` (ops whose shapes come from their data).

Such a call runs infer (the headers) every time, then the run setup kept for its inferred
outputs: the results are those of the generic path (`data_calls.ENABLED` off) byte for byte,
in the modes that run calls, for uniform and ragged batches and every GPU decoder; a batch of
the same files' count and sizes but other image sizes gets its own shapes (no stale setup);
errors are raised or kept as on the generic path, naming the op and the sample; a changed limit
checks kept setups again."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from _check import assert_close, samples_of
from _decoder_data import _pixels, encode

import ndd_triton as ndd
from ndd_triton.runtime import data_calls, plans
from ndd_triton.runtime import prepare as _prepare

CALLS: dict[str, Callable[[ndd.Batch], ndd.Batch]] = {
    "image": lambda b: ndd.decoders.image(b, device="gpu"),
    "image_gray": lambda b: ndd.decoders.image(b, device="gpu", output_type=2),
    "image_float": lambda b: ndd.decoders.image(b, device="gpu", dtype=ndd.float32),
    "image_crop": lambda b: ndd.decoders.image_crop(b, device="gpu", crop=(5, 4),
                                                    crop_pos_x=0.3),
    "image_slice": lambda b: ndd.decoders.image_slice(b, device="gpu", start=[1, 2],
                                                      shape=[4, 3]),
    "image_random_crop": lambda b: ndd.decoders.image_random_crop(b, device="gpu", rng=_RNG[0]),
}  # fmt: skip
_RNG = [ndd.random.RNG(seed=5)]  # one per run (an RNG is part of the plan key)


def _jpegs(sizes: list[tuple[int, int]], seed: int = 0, quality: int = 90) -> ndd.Batch:
    return ndd.as_batch([encode(_pixels(h, w, 3, seed + i), "JPEG", quality=quality)
                         for i, (h, w) in enumerate(sizes)])  # fmt: skip


_host = samples_of


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        assert_close(x, y)  # (dtype, shape, every value)


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts calls that `data_call` answered; plans start empty."""
    count: list[int] = []
    real = data_calls.data_call

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        done = real(*args, **kwargs)
        if done is not None:
            count.append(1)
        return done

    monkeypatch.setattr(_prepare, "data_call", counting)
    plans.PLANS.clear()
    return count


BATCHES = [[(9, 13), (16, 7), (8, 8)], [(8, 8)] * 3, [(13, 9), (7, 16), (8, 8)]]


@pytest.mark.parametrize("mode", ["sync_cpu", "sync_full", "eager"])
@pytest.mark.parametrize("name", list(CALLS))
def test_results_equal_the_generic_path(counted, monkeypatch, name, mode):
    """Every call after the first (which makes the plan) goes through `data_call`, and each
    batch decodes to the generic path's bytes; the batches come back (kept setups)."""
    batches = [_jpegs(sizes, seed=k) for k, sizes in enumerate(BATCHES)]
    _RNG[0] = ndd.random.RNG(seed=5)
    got = []
    with getattr(ndd.EvalMode, mode):
        for _ in range(2):
            got += [_host(CALLS[name](b)) for b in batches]
    assert len(counted) == len(got) - 1
    monkeypatch.setattr(data_calls, "ENABLED", False)
    plans.PLANS.clear()
    _RNG[0] = ndd.random.RNG(seed=5)
    with getattr(ndd.EvalMode, mode):
        want = [_host(CALLS[name](b)) for b in batches * 2]
    assert len(counted) == len(got) - 1
    for g, w in zip(got, want, strict=True):
        _same(g, w)


def test_same_file_sizes_other_image_sizes_get_their_own_shapes(counted):
    """Two batches whose files have the same count (and here the same header layout) but whose
    images differ in size: each call has its own shapes, whichever was seen first."""
    wide, tall = _jpegs([(8, 24), (16, 8)]), _jpegs([(24, 8), (8, 16)])
    for _ in range(3):
        for batch, shapes in ((wide, [(8, 24, 3), (16, 8, 3)]), (tall, [(24, 8, 3), (8, 16, 3)])):
            out = ndd.decoders.image(batch, device="gpu")
            assert [tuple(s) for s in out.shape] == shapes
            _same(_host(out), _host(ndd.decoders.image(batch)))
    assert len(counted) == 5


def test_eager_large_batches_are_queued_with_the_same_results(counted, monkeypatch):
    """Eager work above the inline limit goes to the executor as an invocation."""
    monkeypatch.setattr("ndd_triton.runtime.run_now._INLINE_MAX_BYTES", 64)
    batch = _jpegs([(9, 13), (16, 7)])
    with ndd.EvalMode.eager:
        outs = [ndd.decoders.image(batch, device="gpu") for _ in range(3)]
        got = [_host(o) for o in outs]
    assert len(counted) == 2
    for g in got:
        _same(g, _host(ndd.decoders.image(batch)))


@pytest.mark.parametrize("mode", ["sync_cpu", "eager"])
def test_errors_name_the_op_and_sample_as_before(counted, files, mode):
    """A corrupt header fails at the call (sync) or at the read (eager) naming the op and the
    sample; a file that fails while decoding is named the same way; the next call works."""
    good = _jpegs([(9, 13), (16, 7)])
    jpeg = encode(_pixels(40, 56, 3, 20), "JPEG", quality=90)
    cut = ndd.as_batch([jpeg, jpeg[: len(jpeg) * 2 // 3]])  # the header is whole
    corrupt = ndd.as_batch([files["png"], files["jpeg420"][:2]])
    with getattr(ndd.EvalMode, mode):
        for _ in range(2):
            ndd.decoders.image(good, device="gpu").evaluate()
            with pytest.raises(RuntimeError, match="decoders.image: sample 1: unrecognised or "
                                                   "corrupt image data"):  # fmt: skip
                ndd.decoders.image(corrupt, device="gpu").evaluate()
            with pytest.raises(RuntimeError, match="decoders.image: sample 1: cannot decode the "
                                                   "JPEG image"):  # fmt: skip
                ndd.decoders.image(cut, device="gpu").evaluate()
        _same(_host(ndd.decoders.image(good, device="gpu")), _host(ndd.decoders.image(good)))
    assert counted


def test_a_lowered_limit_checks_kept_setups_again(counted):
    batch = _jpegs([(9, 13), (16, 7)])
    ndd.decoders.image(batch, device="gpu").evaluate()
    ndd.decoders.image(batch, device="gpu").evaluate()  # (its setup kept)
    previous = ndd.set_limits(max_sample_elements=300)
    try:
        with ndd.EvalMode.sync_cpu, pytest.raises(
                ValueError, match=r"decoders.image: the output of sample 0 would have shape "
                                  r"\[9, 13, 3\]"):  # fmt: skip
            ndd.decoders.image(batch, device="gpu")
    finally:
        ndd.set_limits(**previous)
    assert ndd.decoders.image(batch, device="gpu").shape == [(9, 13, 3), (16, 7, 3)]


def test_cpu_calls_and_deferred_calls_take_the_generic_path(counted):
    batch = _jpegs([(9, 13), (16, 7)])
    for _ in range(2):
        ndd.decoders.image(batch).evaluate()
    with ndd.EvalMode.deferred:
        outs = [ndd.decoders.image(batch, device="gpu") for _ in range(2)]
        for out in outs:
            _same(_host(out), _host(ndd.decoders.image(batch)))
    assert not counted
