"""ndd_triton's CPU kernels run torch on one OpenMP thread on every thread they run on,
including the caller's (sync modes, inlined tiny work), and leave the caller's setting as it
was (runtime/torch_threads.py)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import ndd_triton as ndd
import ndd_triton.kernels.cpu.mel_filter_bank as mel_kernel


@pytest.fixture
def seen_threads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """(thread name, torch.get_num_threads()) of every mel_filter_bank sample run."""
    seen: list[tuple[str, int]] = []
    original = mel_kernel.apply_along_axis

    def probe(out, inp, arg):  # type: ignore[no-untyped-def]
        seen.append((threading.current_thread().name, torch.get_num_threads()))
        original(out, inp, arg)

    monkeypatch.setattr(mel_kernel, "apply_along_axis", probe)
    return seen


@pytest.mark.parametrize("mode", [ndd.EvalMode.sync_cpu, ndd.EvalMode.eager])
def test_kernels_on_the_callers_thread_use_one_torch_thread(seen_threads, mode):
    caller = threading.current_thread().name
    before = torch.get_num_threads()
    if before < 2:
        torch.set_num_threads(2)  # (the setting a kernel must not inherit)
    try:
        spectrum = ndd.as_batch([np.ones((257, 80), np.float32)])  # 82 KB: above the
        # size where torch could go parallel (`dispatch.TORCH_PARALLEL_BYTES`)
        with mode:
            out = ndd.mel_filter_bank(spectrum, nfilter=8, sample_rate=16000.0)
            out.evaluate()
        assert seen_threads
        assert all(threads == 1 for _, threads in seen_threads), seen_threads
        if mode is ndd.EvalMode.sync_cpu:  # one sample: it ran right here
            assert seen_threads[0][0] == caller
        assert torch.get_num_threads() == max(before, 2)  # the caller's setting is back
        reference = ndd.mel_filter_bank(spectrum, nfilter=8, sample_rate=16000.0)
        np.testing.assert_array_equal(out.torch().numpy(), reference.torch().numpy())
    finally:
        torch.set_num_threads(before)


def test_small_work_gives_the_same_bytes_whatever_the_callers_torch_threads():
    """MKL sums a GEMM (and an FFT) in another order with more threads even for tiny inputs: a
    small uint8 resize (the float path's GEMMs) gave a pixel off by one, and spectrograms of
    short clips differed in the last bits, on the caller's thread with torch's two threads
    against a pool thread's one, so a call's bytes depended on the thread that ran it. Small work now runs MKL on one thread too (`SerialBlas`), and the caller's
    settings come back after."""
    from ndd_triton.runtime import torch_threads

    before = torch.get_num_threads()
    gen = np.random.default_rng(0)
    cases = []
    for _ in range(300):  # (4 of these differed before, with MKL)
        shapes = [(int(gen.integers(4, 9)), int(gen.integers(4, 9)), 3) for _ in range(3)]
        images = [gen.integers(0, 256, s, dtype=np.uint8) for s in shapes]
        cases.append((ndd.as_batch(images, layout="HWC"),
                      [int(gen.integers(3, 8)), int(gen.integers(3, 8))]))  # fmt: skip
    clips = [ndd.as_batch([gen.standard_normal(int(gen.integers(200, 400))).astype(np.float32)
                           for _ in range(3)]) for _ in range(10)]  # fmt: skip
    mkl = torch_threads._functions()[2]

    def mkl_local() -> int | None:  # (setting it returns the previous value: set it back)
        if mkl is None:
            return None
        value = mkl(0)
        mkl(value)
        return value  # type: ignore[no-any-return]

    try:
        results = []
        for threads in (1, 2):
            torch.set_num_threads(threads)
            local = mkl_local()
            with ndd.EvalMode.sync_cpu:
                results.append([[np.array(s) for s in ndd.resize(batch, size=size)]
                                for batch, size in cases] +
                               [[np.array(s) for s in ndd.spectrogram(
                                   clip, nfft=64, window_length=64, window_step=32)]
                                for clip in clips])  # fmt: skip
            assert torch.get_num_threads() == threads
            assert mkl_local() == local  # the caller's MKL setting is back
        for k, (one, two) in enumerate(zip(*results, strict=True)):
            for a, b in zip(one, two, strict=True):
                np.testing.assert_array_equal(a, b, err_msg=f"case {k}")
    finally:
        torch.set_num_threads(before)
