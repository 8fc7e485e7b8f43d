"""Golden conformance: DALI 2.4 CPU reference outputs, on the cpu and on the emulated gpu.

Cases are collected for every op this package implements (see `implemented`); the list of op
names without an implementation yet is printed by `python tests/golden_coverage.py`.
"""

from __future__ import annotations

import importlib.util
import operator

import golden
import pytest

import ndd_triton as ndd

# Known, understood deviations: case id -> tolerance override (document why).
TOLERANCE_OVERRIDES: dict[str, dict[str, float]] = {}


def implemented(op: str) -> bool:
    """True when `op` (golden's name) resolves in ndd_triton."""
    if op.startswith("__"):
        return importlib.util.find_spec("ndd_triton.ops.arithmetic") is not None
    obj = ndd
    for part in op.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return False
    return True


CASES = [c for c in golden.cases() if implemented(c.op)]


def _to_gpu(x):
    return x.gpu() if isinstance(x, ndd.Tensor | ndd.Batch) else x


def run_case(case, backend: str):
    inputs = case.build_inputs(ndd)
    if backend == "gpu":
        inputs = [_to_gpu(x) for x in inputs]
    kwargs = case.kwargs(enum=lambda t, n: golden._default_enum(ndd, t, n),
                         dtype=lambda n: golden._default_dtype(ndd, n),
                         per_sample=lambda arrays: ndd.as_batch(arrays))  # fmt: skip
    if case.op.startswith("__"):
        fn = getattr(operator, case.op)
    else:
        fn = case.resolve_op(ndd)
    result = fn(*inputs, **kwargs)
    if backend == "gpu":
        outs = result if isinstance(result, tuple) else (result,)
        for out in outs:
            assert out.device.device_type == "gpu", f"{case.id}: result on {out.device}"
        result = tuple(o.cpu() for o in outs) if isinstance(result, tuple) else result.cpu()
    return result


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_golden(case, backend):
    if backend == "gpu" and getattr(case.resolve_op(ndd), "_schema", None) is not None and \
            "gpu" not in case.resolve_op(ndd)._schema.devices:  # fmt: skip
        with pytest.raises(ValueError, match="not supported"):
            run_case(case, backend)
        return
    result = run_case(case, backend)
    case.check(result, tolerance=TOLERANCE_OVERRIDES.get(case.id))


# Golden ops not implemented yet.
NOT_YET: set[str] = set()


def test_golden_coverage_is_what_we_claim():
    missing = {op for op, _ in golden.ops() if not implemented(op)}
    assert missing == NOT_YET, f"unexpected coverage change: {sorted(missing ^ NOT_YET)}"
    assert len(CASES) == 573
