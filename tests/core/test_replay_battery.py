"""The GPU path's caches (plans and their infer memo, the launch memo, whole-call replay) against
no caches: a generated sequence of GPU calls whose signatures repeat (a few shapes, a few
argument draws) while the data and per-sample values change, each call's bytes equal to the
same call computed with every cache off; eager and sync modes interleaved."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.runtime import launch_memo, plans

N = 3
SHAPES = [[(5, 7, 3), (6, 4, 3), (7, 7, 3)], [(4, 9, 3), (8, 5, 3), (3, 3, 3)], [(6, 6, 3)] * N]


def _batch(values: list[Any], dtype: type = np.float32) -> ndd.Batch:
    return ndd.as_batch([np.asarray(v, dtype) for v in values])


def _ops(gen: np.random.Generator) -> dict[str, Callable[[ndd.Batch, Any], Any]]:
    """Calls whose per-sample arguments come from `gen` (seeded per call: a few recur)."""
    def u(lo: float, hi: float) -> ndd.Batch:
        return _batch([gen.uniform(lo, hi) for _ in range(N)])

    def coins() -> ndd.Batch:
        return _batch(gen.integers(0, 2, N), np.int32)

    return {
        "flip": lambda b, r: ndd.flip(b, horizontal=coins(), vertical=coins()),
        "crop": lambda b, r: ndd.crop(b, crop=(3, 3), crop_pos_x=u(0, 1), crop_pos_y=u(0, 1)),
        "cmn": lambda b, r: ndd.crop_mirror_normalize(
            b, crop=(3, 3), crop_pos_x=u(0, 1), mirror=coins(), mean=[1.0, 2.0, 3.0],
            std=[2.0, 2.0, 2.0]),
        "resize": lambda b, r: ndd.resize(b, resize_x=_batch(gen.integers(3, 8, N)),
                                          resize_y=_batch(gen.integers(3, 8, N))),
        "rrc": lambda b, r: ndd.random_resized_crop(b, size=[4, 5], rng=r),
        "rotate": lambda b, r: ndd.rotate(b, angle=u(-30, 30), fill_value=3),
        "color": lambda b, r: ndd.color_twist(b, hue=u(-40, 40), contrast=u(0.5, 1.5)),
        "grid_mask": lambda b, r: ndd.grid_mask(b, tile=_batch(gen.integers(2, 5, N), np.int32),
                                                angle=u(-1, 1)),
        "erase": lambda b, r: ndd.erase(
            b, anchor=_batch([gen.integers(0, 3, 2) for _ in range(N)]),
            shape=_batch([gen.integers(1, 4, 2) for _ in range(N)]), axis_names="HW",
            fill_value=u(0, 200)),
        "slice": lambda b, r: ndd.slice(b, rel_start=_batch([gen.uniform(0, 0.4, 2)
                                                             for _ in range(N)]),
                                        rel_shape=_batch([[0.5, 0.5]] * N), axis_names="HW"),
        "noise": lambda b, r: ndd.noise.gaussian(b, stddev=u(1, 10), rng=r),
    }  # fmt: skip


def _call(name: str, images: list[np.ndarray], arg_seed: int, seed: int) -> list[np.ndarray]:
    batch = ndd.as_batch(images, layout="HWC").gpu()
    out = _ops(np.random.default_rng(arg_seed))[name](batch, ndd.random.RNG(seed=seed))
    return [np.array(s) for s in out.cpu()]


@pytest.mark.parametrize("seed", [0, 1])
def test_cached_calls_give_the_bytes_of_uncached_ones(seed: int, monkeypatch) -> None:
    gen = np.random.default_rng(seed)
    names = sorted(_ops(gen))
    calls = []
    for _ in range(24):
        shapes = SHAPES[int(gen.integers(0, len(SHAPES)))]
        images = [gen.integers(0, 256, s, dtype=np.uint8) for s in shapes]
        calls.append((names[int(gen.integers(0, len(names)))], images, int(gen.integers(0, 3)),
                      int(gen.integers(0, 1 << 30))))  # fmt: skip
    monkeypatch.setattr(launch_memo, "ENABLED", False)
    expected = []
    with ndd.EvalMode.sync_cpu:
        for call in calls:
            plans.PLANS.clear()  # (no remembered infer result either)
            expected.append(_call(*call))
    monkeypatch.setattr(launch_memo, "ENABLED", True)
    plans.PLANS.clear()
    launch_memo.clear()
    hits = launch_memo.stats["hits"]
    for rep in range(2):  # the second round replays what the first recorded
        for k, call in enumerate(calls):
            with (ndd.EvalMode.eager if (k + rep) % 2 else ndd.EvalMode.sync_cpu):
                got = _call(*call)
            for g, e in zip(got, expected[k], strict=True):
                assert g.dtype == e.dtype and g.shape == e.shape, (call[0], k, rep)
                np.testing.assert_array_equal(g, e, err_msg=f"{call[0]} call {k} round {rep}")
    assert launch_memo.stats["hits"] > hits  # (the caches were used)
