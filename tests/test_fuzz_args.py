"""Argument fuzzing of every op schema (issue #22): bad values give a clean error or a result.

For every public op, a working base call is found automatically (candidate inputs x the
required arguments' known-good values). Hypothesis then replaces one argument with a drawn
bad value (NaN, inf, 0, negative, huge, wrong length, wrong type, a per-sample Batch of the
wrong size) and checks, in sync_cpu mode:

* the call returns a result (which evaluates), or raises TypeError / ValueError / RuntimeError
  / IndexError whose message names the op and the argument;
* within `PER_CALL_S` seconds (no unbounded work); a call still running after `HANG_S` seconds
  ends the test process with every thread's traceback (faulthandler), so a hang cannot stall CI;
* with no warning escaping (NumPy RuntimeWarnings are turned into failures);
* and the base call still works afterwards (no poisoned state).

CI runs a bounded number of examples per op (the whole file in well under a minute);
`NDD_TRITON_FUZZ_EXAMPLES=200` runs a longer search locally. `NDD_TRITON_FUZZ_GPU=0` skips the
emulated-GPU subset.
"""

from __future__ import annotations

import faulthandler
import io
import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ndd_triton as ndd
from ndd_triton.ops.opgen import all_schemas, public_function
from ndd_triton.ops.schema import REQUIRED, Arg, OpSchema

EXAMPLES = int(os.environ.get("NDD_TRITON_FUZZ_EXAMPLES", "6"))
PER_CALL_S = 10.0
HANG_S = 120.0  # the watchdog: far above PER_CALL_S, which is checked after the call
DOCUMENTED = (TypeError, ValueError, RuntimeError, IndexError)
NAN, INF = float("nan"), float("inf")


@pytest.fixture(autouse=True, scope="module")
def _small_limits():
    """Limits of 4 Mi elements per sample and 257-tap windows: values just under the default
    limits (2**31 elements) would allocate gigabytes per example on a shared CI machine; the
    check itself is the same code at any limit."""
    previous = ndd.set_limits(max_sample_elements=1 << 22, max_window=257)
    yield
    ndd.set_limits(**previous)


def _jpeg() -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.full((6, 7, 3), 90, np.uint8)).save(buf, format="JPEG")
    return np.frombuffer(buf.getvalue(), np.uint8)


_RNG = np.random.default_rng(0)
_U8 = [_RNG.integers(0, 255, (6, 7, 3), dtype=np.uint8),
       _RNG.integers(0, 255, (5, 8, 3), dtype=np.uint8)]  # fmt: skip
_F32 = [a.astype(np.float32) / 255 for a in _U8]
_BOXES = [np.array([[0.1, 0.1, 0.5, 0.6], [0.2, 0.3, 0.9, 0.8]], np.float32)] * 2
_LABELS = [np.array([1, 2], np.int32)] * 2
_VEC = [np.linspace(0, 1, 5, dtype=np.float32), np.linspace(0, 1, 7, dtype=np.float32)]


def _wav() -> np.ndarray:
    import soundfile

    buf = io.BytesIO()
    soundfile.write(buf, np.sin(np.arange(400) / 7.0).astype(np.float32), 8000, format="WAV")
    return np.frombuffer(buf.getvalue(), np.uint8)


_SIGNALS = [np.sin(np.arange(300) / 5.0).astype(np.float32),
            np.sin(np.arange(257) / 3.0).astype(np.float32)]  # fmt: skip


def _batch(samples: list[np.ndarray], layout: str | None = None) -> ndd.Batch:
    return ndd.as_batch(samples, layout=layout)


# Candidate inputs (each a function: fresh objects per call), tried in order.
CANDIDATES: list[Callable[[], list[Any]]] = [
    lambda: [_batch(_U8, "HWC")],
    lambda: [_batch(_F32, "HWC")],
    lambda: [_batch(_BOXES)],
    lambda: [_batch([np.array([6, 7], np.int64)] * 2)],
    lambda: [_batch([_jpeg()] * 2)],
    lambda: [_batch(_VEC)],
    lambda: [_batch(_SIGNALS)],
    lambda: [_batch([_wav()] * 2)],
    lambda: [_batch([np.array([[0.1, 0.2], [0.5, 0.9], [1.0, 0.0]], np.float32)] * 2)],
    lambda: [_batch([np.ones((1, 6, 7), np.uint8)] * 2)],
    lambda: [_batch(_U8, "HWC"), _batch(_U8, "HWC")],
    lambda: [_batch(_F32, "HWC"), _batch(_F32, "HWC")],
    lambda: [_batch(_BOXES), _batch(_LABELS)],
    lambda: [_batch(_F32, "HWC"), _batch([np.ones((3, 3), np.float32)] * 2)],
    lambda: [_batch(_F32, "HWC"), _batch([np.array(0.5, np.float32)] * 2)],
    lambda: [_batch([np.eye(2, 3, dtype=np.float32)] * 2),
             _batch([np.eye(2, 3, dtype=np.float32)] * 2)],
    lambda: [],
]
REQUIRED_VALUES: dict[str, Any] = {
    "ratio": 2.0, "anchors": [0.0, 0.0, 1.0, 1.0], "dtype": ndd.float32, "tiles_x": 2,
    "tiles_y": 2, "clip_limit": 2.0, "image_type": ndd.types.RGB if hasattr(ndd.types, "RGB")
    else 0, "output_type": 1, "axes": [0], "fill_value": 0, "size": [4.0, 4.0],
    "crop_shape": [3, 3], "roi_start": [0, 0], "angle": 10.0, "offset": [1.0, 1.0],
    "scale": [2.0, 2.0],
}  # fmt: skip
# Ops that need more than their required arguments to run at all.
EXTRA_ARGS: dict[str, dict[str, Any]] = {
    "resize": {"size": [4.0, 5.0]}, "resize_crop_mirror": {"size": [4.0, 5.0], "crop": [3, 3]},
    "gaussian_blur": {"sigma": 1.0}, "slice": {"rel_start": [0.1, 0.1], "rel_shape": [0.5, 0.5]},
    "decoders.image_slice": {"rel_start": [0.1, 0.1], "rel_shape": [0.5, 0.5]},
    "reshape": {"shape": [-1]}, "squeeze": {"axes": [0]}, "paste": {"fill_value": [0, 0, 0]},
    "warp_affine": {"matrix": [1.0, 0.0, 0.5, 0.0, 1.0, 0.5]},
    "transforms.shear": {"shear": [0.1, 0.2]},
    "multi_paste": {"in_ids": [0], "shapes": [[2, 2]], "out_anchors": [[1, 1]],
                    "output_size": [6, 7]},
    "roi_random_crop": {"roi_end": [4, 4], "in_shape": [6, 7]},
    "audio_resample": {"scale": 0.5},
}  # fmt: skip


def _evaluate(result: Any) -> None:
    for r in result if isinstance(result, tuple) else (result,):
        r.evaluate()


def _base_call(schema: OpSchema) -> tuple[Callable[[], list[Any]], dict[str, Any]] | None:
    """The first candidate (inputs, required args) for which the op runs; None if none."""
    fn = public_function(schema.name)
    required = {a.name: REQUIRED_VALUES[a.name] for a in schema.args
                if a.default is REQUIRED and a.name in REQUIRED_VALUES}  # fmt: skip
    if len(required) != sum(a.default is REQUIRED for a in schema.args):
        return None
    required.update(EXTRA_ARGS.get(schema.name, {}))
    for make in CANDIDATES:
        try:
            with ndd.EvalMode.sync_cpu, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _evaluate(fn(*make(), **required))
        except Exception:
            continue
        return make, required
    return None


# io.file.read reads the files its input names: its two arguments are I/O flags.
FUZZED = [s for s in all_schemas() if s.public and s.function is None and
          any(a.kind != "rng" for a in s.args) and s.name != "io.file.read"]  # fmt: skip
_BASES: dict[str, Any] = {}


def base_of(schema: OpSchema) -> tuple[Callable[[], list[Any]], dict[str, Any]]:
    if schema.name not in _BASES:
        _BASES[schema.name] = _base_call(schema)
    base = _BASES[schema.name]
    if base is None:
        pytest.fail(f"{schema.name}: no candidate input runs it; add one to CANDIDATES")
    return base  # type: ignore[no-any-return]


def _numbers(kind: str) -> st.SearchStrategy[Any]:
    special = [NAN, INF, -INF, 0, -1, -(10**9), 10**9, 1e30, -1e30, 2**70, 1e-12, 0.5]
    if kind in ("int", "enum"):
        special += [np.int64(-4), np.int32(7), 2**63]
    return st.sampled_from(special) | st.floats(allow_nan=True, allow_infinity=True) | \
        st.integers(min_value=-(2**65), max_value=2**65)  # fmt: skip


_WRONG_TYPES = st.sampled_from(["abc", b"x", object(), {"a": 1}, 1j, [[1, 2], [3]], (),
                                [None], "HWC"])  # fmt: skip


def bad_values(arg: Arg) -> st.SearchStrategy[Any]:
    """Values for one argument: mostly invalid, some valid edge cases."""
    options = [_WRONG_TYPES]
    if arg.kind in ("int", "float", "enum", "bool"):
        options.append(_numbers(arg.kind))
        options.append(st.lists(_numbers(arg.kind), min_size=0, max_size=7))
    elif arg.kind in ("str", "layout"):
        options.append(st.sampled_from(["", "nope", "HWC", "CHW", "xyz" * 30, "\x00"]))
    elif arg.kind == "dtype":
        options.append(st.sampled_from([12345, -1, "float33", ndd.bool, ndd.float16, ndd.uint64]))
    if arg.per_sample:
        options.append(st.builds(_mismatched_batch, _numbers(arg.kind), st.integers(1, 3)))
        options.append(st.builds(_shaped_batch, st.integers(0, 5)))
    return st.one_of(*options)


def _mismatched_batch(value: Any, n: int) -> ndd.Batch:
    """A per-sample argument Batch with `n` samples (the base inputs have 2): n != 2 is a
    batch-size mismatch; n == 2 is a valid batch of odd values."""
    v = np.float64(value) if isinstance(value, float) or abs(int(value)) >= 2**31 else \
        np.int32(value)  # fmt: skip
    return ndd.as_batch([np.array(v)] * (n if n != 2 else 3))


def _shaped_batch(k: int) -> ndd.Batch:
    """Per-sample values of the wrong (and ragged) shape."""
    return ndd.as_batch([np.ones((k,), np.float32), np.ones((k + 1,), np.float32)])


def _names_op_and_arg(message: str, schema: OpSchema, arg: Arg, given: dict[str, Any]) -> bool:
    """The op is named, and the drawn argument, or another one the call gave that conflicts
    with it (`axes=0` with a two-value `rel_start`: the message names 'rel_start')."""
    names = [arg.name, *given]
    return (schema.name in message or f"{schema.short_name}(" in message) and \
        any(f"'{n}'" in message or f" {n}=" in message or f" {n} " in message
            for n in names)  # fmt: skip


def check_one(schema: OpSchema, arg: Arg, value: Any, device: str = "cpu") -> None:
    make, required = base_of(schema)
    fn = public_function(schema.name)
    kwargs = {**required, arg.name: value}
    inputs = make()
    if device == "gpu":
        inputs = [x.gpu() for x in inputs]
        kwargs["device"] = "gpu"
    start = time.perf_counter()
    with ndd.EvalMode.sync_cpu, warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", "input .* has no layout", UserWarning)
        warnings.filterwarnings("ignore", ".* is deprecated", DeprecationWarning)
        error: Exception | None = None
        # a hang fails the run with every thread's traceback instead of stalling CI
        faulthandler.dump_traceback_later(HANG_S, exit=True)
        try:
            _evaluate(fn(*inputs, **kwargs))
        except DOCUMENTED as e:
            error = e
        finally:
            faulthandler.cancel_dump_traceback_later()
    if error is not None:
        assert _names_op_and_arg(str(error), schema, arg, kwargs), (
            f"{schema.name}({arg.name}={value!r:.60}): {type(error).__name__} does not name "
            f"the op and the argument: {str(error)[:300]}")  # fmt: skip
    elapsed = time.perf_counter() - start
    assert elapsed < PER_CALL_S, f"{schema.name}({arg.name}={value!r:.60}) took {elapsed:.1f} s"
    with ndd.EvalMode.sync_cpu:  # later calls work
        base_inputs = make()
        if device == "gpu":
            base_inputs = [x.gpu() for x in base_inputs]
            _evaluate(fn(*base_inputs, device="gpu", **required))
        else:
            _evaluate(fn(*base_inputs, **required))


_SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 20,
                     suppress_health_check=list(HealthCheck), database=None)  # fmt: skip


@pytest.mark.parametrize("schema", FUZZED, ids=[s.name for s in FUZZED])
@_SETTINGS
@given(data=st.data())
def test_fuzz_arguments(schema: OpSchema, data: st.DataObject) -> None:
    args = [a for a in schema.args if a.kind != "rng"]
    arg = data.draw(st.sampled_from(args), label="argument")
    value = data.draw(bad_values(arg), label="value")
    check_one(schema, arg, value)


GPU_SUBSET = ["flip", "resize", "crop", "gaussian_blur", "normalize", "hsv", "slice"]


@pytest.mark.skipif(os.environ.get("NDD_TRITON_FUZZ_GPU") == "0", reason="disabled by env")
@pytest.mark.parametrize("name", GPU_SUBSET)
@settings(max_examples=max(2, EXAMPLES // 3), deadline=None, derandomize=EXAMPLES <= 20,
          suppress_health_check=list(HealthCheck), database=None)  # fmt: skip
@given(data=st.data())
def test_fuzz_arguments_gpu(name: str, data: st.DataObject) -> None:
    schema = next(s for s in FUZZED if s.name == name)
    args = [a for a in schema.args if a.kind != "rng"]
    arg = data.draw(st.sampled_from(args), label="argument")
    value = data.draw(st.one_of(_numbers(arg.kind), _WRONG_TYPES) if arg.kind in
                      ("int", "float", "enum", "bool") else bad_values(arg), label="value")
    check_one(schema, arg, value, "gpu")


def test_every_op_has_a_base_call() -> None:
    """The fuzz covers every public schema-generated op: each has a working base call."""
    missing = [s.name for s in FUZZED if _base_call(s) is None]
    assert not missing, f"no base call found for {missing}"
