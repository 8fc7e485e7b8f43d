"""The common op battery: `check_op` runs one op against an independent NumPy reference.

It covers both backends (cpu, and the emulated gpu through the Triton interpreter), Batch and
Tensor inputs, constant and per-sample arguments, all four eval modes (same bytes), inferred
metadata == produced output, and inputs left unmodified. Op test modules add what is specific.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pytest

import ndd_triton as ndd

BACKENDS = ("cpu", "gpu")
MODES = (ndd.EvalMode.deferred, ndd.EvalMode.eager, ndd.EvalMode.sync_cpu,
         ndd.EvalMode.sync_full)  # fmt: skip


def assert_close(got: Any, expected: Any, atol: float = 0, rtol: float = 0, where: str = "",
                 check_dtype: bool = True) -> None:  # fmt: skip
    """Compare arrays: shape, dtype, values; report count, first position and max difference."""
    got = np.asarray(got)
    expected = np.asarray(expected)
    assert got.shape == expected.shape, f"{where}: shape {got.shape} != {expected.shape}"
    if check_dtype:
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} != {expected.dtype}"
    if expected.size == 0:
        return
    if atol == 0 and rtol == 0 and expected.dtype.kind in "biu":
        bad = got != expected
    else:
        bad = ~np.isclose(got.astype(np.float64), expected.astype(np.float64), atol=atol,
                          rtol=rtol, equal_nan=True)  # fmt: skip
    if bad.any():
        idx = tuple(int(i) for i in np.argwhere(bad)[0])
        diff = np.abs(got.astype(np.float64) - expected.astype(np.float64))
        raise AssertionError(f"{where}: {int(bad.sum())} of {bad.size} elements differ (max "
                             f"{np.nanmax(np.where(bad, diff, 0))}); first at {idx}: got "
                             f"{got[idx]!r} expected {expected[idx]!r}")


def to_device(x: Any, backend: str) -> Any:
    """Move a Tensor/Batch to the backend's device."""
    return x.gpu() if backend == "gpu" else x


def samples_of(result: Any) -> list[np.ndarray]:
    """Per-sample NumPy arrays of a Tensor/Batch result (copied to the host)."""
    result = result.cpu()
    if isinstance(result, ndd.Batch):
        return [np.asarray(s) for s in result]
    return [np.asarray(result)]


def _per_sample_kwargs(per_sample: dict[str, Sequence[Any]], i: int) -> dict[str, Any]:
    return {k: v[i] for k, v in per_sample.items()}


def check_op(op: Callable[..., Any], samples: Sequence[np.ndarray],
             reference: Callable[..., np.ndarray], *, args: dict[str, Any] | None = None,
             per_sample: dict[str, Sequence[Any]] | None = None, layout: str | None = None,
             atol: float = 0, rtol: float = 0, backends: Sequence[str] = BACKENDS,
             all_modes: bool = True) -> None:  # fmt: skip
    """Run `op` on a batch of `samples` and on single Tensors; compare with `reference`.

    `reference(sample, **args, **per_sample_args_of_that_sample)` returns the expected array.
    `per_sample` values are passed to the op as `ndd.as_batch` of per-sample arrays.
    """
    args = dict(args or {})
    per_sample = dict(per_sample or {})
    originals = [np.array(s, copy=True) for s in samples]
    expected = [reference(s, **args, **_per_sample_kwargs(per_sample, i))
                for i, s in enumerate(samples)]  # fmt: skip
    for backend in backends:
        where = f"{getattr(op, '__name__', op)}[{backend}]"
        batch = to_device(ndd.as_batch(list(samples), layout=layout), backend)
        kwargs = dict(args)
        for name, values in per_sample.items():
            kwargs[name] = ndd.as_batch([np.asarray(v) for v in values])
        modes = MODES if all_modes else (ndd.EvalMode.eager,)
        outputs = []
        for mode in modes:
            with mode:
                result = op(batch, **kwargs)
                inferred = (result.dtype, result.layout, result.device)
                got = samples_of(result)
            assert inferred == (result.dtype, result.layout, result.device)
            assert result.device.device_type == backend, f"{where}: result on {result.device}"
            assert result.shape == [g.shape for g in got], f"{where}: inferred shape != produced"
            for i, (g, e) in enumerate(zip(got, expected)):
                assert_close(g, e, atol, rtol, f"{where} {mode.name} sample {i}")
            outputs.append(got)
        for got in outputs[1:]:
            for a, b in zip(got, outputs[0]):
                assert a.tobytes() == b.tobytes(), f"{where}: eval modes disagree"
        if not per_sample:
            single = to_device(ndd.as_tensor(samples[-1], layout=layout), backend)
            res = op(single, **args)
            assert isinstance(res, ndd.Tensor), f"{where}: Tensor input must give a Tensor"
            assert_close(samples_of(res)[0], expected[-1], atol, rtol, f"{where} tensor input")
    for s, o in zip(samples, originals):
        assert s.tobytes() == o.tobytes(), "the op modified its input"  # NaN-safe


@contextlib.contextmanager
def raises_at_call(exc: Any, match: str | None = None) -> Iterator[Any]:
    """`pytest.raises` around op calls whose errors the operator itself detects (argument
    values, layouts, dtypes, windows, headers, shape mismatches), run in sync_cpu mode.

    Such errors raise at the call in the sync modes and where the result is first consumed in
    eager and deferred mode (spec/core.md §2); tests/core/test_eval_contract.py checks that
    surfacing in every mode, so the op tests check the error itself (class and message) here.
    """
    with ndd.EvalMode.sync_cpu, pytest.raises(exc, match=match) as info:
        yield info
