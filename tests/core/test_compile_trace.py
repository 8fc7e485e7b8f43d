"""Compile mode's trace keys: constants compare by content, long lists of numbers by their
packed bytes (a per-call cost of microseconds instead of milliseconds for thousands of
values), with the same answers as the element-by-element keys."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.runtime.compiled import CompileFallbackWarning
from ndd_triton.runtime.trace import content_key

LONG = 40  # above the packed-key threshold


def test_long_lists_key_by_content() -> None:
    floats = np.random.default_rng(0).random(LONG).tolist()
    assert content_key(list(floats)) == content_key(list(floats))
    assert content_key(floats) != content_key(tuple(floats))  # list vs tuple, as before
    changed = list(floats)
    changed[-1] += 1e-12
    assert content_key(changed) != content_key(floats)
    assert content_key([0.0] * LONG) != content_key([-0.0] * LONG)  # float.hex tells them apart
    assert content_key([1] * LONG) != content_key([1.0] * LONG)  # an int is not a float
    assert content_key([float("nan")] * LONG) == content_key([float("nan")] * LONG)
    assert content_key(list(range(LONG))) == content_key(list(range(LONG)))


@pytest.mark.parametrize("values", [
    [1.5] * (LONG - 1) + [2],  # mixed numbers: element by element
    [2**70] * LONG,  # beyond int64
    [True] * LONG,  # bools are not ints here
    ["a"] * LONG,
])  # fmt: skip
def test_other_long_lists_key_element_by_element(values: list) -> None:
    assert content_key(list(values)) == content_key(list(values))
    assert content_key(values) == (list, tuple(content_key(v) for v in values))


def test_short_lists_keep_element_keys() -> None:
    assert content_key([1.0, 2.0]) == (list, ((float, (1.0).hex()), (float, (2.0).hex())))


def _lut_epoch(values_at: object, compile_: bool) -> tuple[list, object]:
    batches = [ndd.as_batch([np.full((2, 3), i + k, np.uint8) for k in range(2)])
               for i in range(4)]  # fmt: skip
    epoch = ndd.ExternalSource(iter(batches)).captured(2) if compile_ else iter(batches)
    outs = []
    for i, x in enumerate(epoch):
        # a new list object every iteration, as `anchors.tolist()` in a loop body makes
        y = ndd.lookup_table(x, keys=list(range(LONG)), values=values_at(i),  # type: ignore[operator]
                             dtype=ndd.float32)  # fmt: skip
        outs.append([np.array(s) for s in y])
    return outs, epoch


def test_a_long_constant_list_made_anew_each_iteration_is_replayed() -> None:
    table = [float(v) * 0.5 for v in range(LONG)]
    eager, _ = _lut_epoch(lambda i: list(table), False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled, epoch = _lut_epoch(lambda i: list(table), True)
    for a, b in zip(eager, compiled, strict=True):
        for sa, sb in zip(a, b, strict=True):
            np.testing.assert_array_equal(sa, sb)
    assert epoch.session.replayed == 3  # type: ignore[attr-defined]


def test_a_changed_long_list_falls_back() -> None:
    def values(i: int) -> list[float]:
        return [float(v) + (0.25 if i >= 2 and v == 7 else 0.0) for v in range(LONG)]

    eager, _ = _lut_epoch(values, False)
    with pytest.warns(CompileFallbackWarning, match="argument 'values'"):
        compiled, _ = _lut_epoch(values, True)
    for a, b in zip(eager, compiled, strict=True):
        for sa, sb in zip(a, b, strict=True):
            np.testing.assert_array_equal(sa, sb)
