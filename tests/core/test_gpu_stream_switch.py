"""How a GPU call on the caller's thread makes the context's stream current
(`runtime/gpu_run._on_caller_thread`): torch's raw stream calls, stood in for here (no CUDA);
on real CUDA the suite's GPU tests run through it (`NDD_TRITON_TEST_DEVICE=cuda`)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from ndd_triton.runtime import gpu_run


class _FakeCuda:
    """torch._C's current device and per-device current stream ids."""

    def __init__(self, device: int = 0) -> None:
        self.device, self.current = device, {0: 7, 1: 70}
        self.sets: list[tuple[int, int]] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        c = torch._C
        monkeypatch.setattr(c, "_cuda_getDevice", lambda: self.device, raising=False)
        current = lambda index: (self.current[index], index, 1)
        monkeypatch.setattr(c, "_cuda_getCurrentStream", current, raising=False)
        monkeypatch.setattr(c, "_cuda_setStream", self.set_stream, raising=False)

    def set_stream(self, stream_id: int, device_index: int, device_type: int) -> None:
        self.sets.append((stream_id, device_index))
        self.device = device_index  # (torch's own: the stream's device becomes current)
        self.current[device_index] = stream_id


def _stream(stream_id: int, device: int = 0) -> SimpleNamespace:
    return SimpleNamespace(stream_id=stream_id, device_index=device, device_type=1)


def test_the_stream_is_current_during_the_launch_and_restored_after(monkeypatch) -> None:
    cuda = _FakeCuda()
    cuda.install(monkeypatch)
    seen = []
    out = gpu_run._on_caller_thread(_stream(42),
                                    lambda s: seen.append(cuda.current[0]) or [])  # fmt: skip
    assert out == []
    assert seen == [42]
    assert cuda.current[0] == 7
    assert cuda.sets == [(42, 0), (7, 0)]


def test_a_failing_launch_restores_the_callers_stream(monkeypatch) -> None:
    cuda = _FakeCuda()
    cuda.install(monkeypatch)

    def fail(s):  # type: ignore[no-untyped-def]
        raise RuntimeError("launch failed")

    with pytest.raises(RuntimeError, match="launch failed"):
        gpu_run._on_caller_thread(_stream(42), fail)
    assert cuda.current[0] == 7


def test_an_already_current_stream_is_not_set_again(monkeypatch) -> None:
    cuda = _FakeCuda()
    cuda.install(monkeypatch)
    gpu_run._on_caller_thread(_stream(7), lambda s: [])
    assert cuda.sets == []


def test_a_stream_on_another_device_goes_through_torchs_context(monkeypatch) -> None:
    cuda = _FakeCuda(device=0)
    cuda.install(monkeypatch)
    entered = []

    class Context:
        def __init__(self, s):  # type: ignore[no-untyped-def]
            self.s = s

        def __enter__(self):  # type: ignore[no-untyped-def]
            entered.append(self.s.stream_id)

        def __exit__(self, *exc):  # type: ignore[no-untyped-def]
            return False

    monkeypatch.setattr(torch.cuda, "stream", Context)
    gpu_run._on_caller_thread(_stream(99, device=1), lambda s: [])
    assert entered == [99]
    assert cuda.sets == []
