"""equalize: reference = per-plane Python histogram equalisation (spec ops.md §2.10 formula)."""

import numpy as np
import pytest
from _check import check_op, raises_at_call

import ndd_triton as ndd


def equalize_plane(plane):
    values = plane.reshape(-1)
    hist = np.bincount(values, minlength=256)
    cdf = np.cumsum(hist)
    cdf_min = cdf[np.flatnonzero(hist)[0]]
    n = values.size
    if n == cdf_min:
        return plane.copy()
    # (cdf - cdf_min) / (N - cdf_min) * 255, rounded half to even (42.5 -> 42)
    lut = np.rint((cdf - cdf_min).astype(np.float32) * np.float32(255.0 / (n - cdf_min)))
    return lut.astype(np.uint8)[plane]


def ref_equalize(x, layout):
    out = np.empty_like(x)
    h = layout.index("H")
    for idx in np.ndindex(*[s for i, s in enumerate(x.shape) if i not in (h, h + 1)]):
        sl = list(idx)
        sl.insert(h, slice(None))
        sl.insert(h + 1, slice(None))
        out[tuple(sl)] = equalize_plane(x[tuple(sl)])
    return out


def test_spec_example():
    x = np.array([[10, 10, 20, 30], [30, 30, 40, 250]], np.uint8)
    check_op(ndd.equalize, [x], lambda s: ref_equalize(s, "HW"))
    assert np.asarray(ndd.equalize(x)).tolist() == [[0, 0, 42, 170], [170, 170, 212, 255]]


@pytest.mark.parametrize(("layout", "shapes"), [
    ("HWC", [(5, 7, 3), (1, 1, 3), (40, 30, 2)]),  # 1x1 (constant) and multi-chunk planes
    ("CHW", [(2, 6, 5)]),
    ("FHW", [(2, 4, 9)]),
    ("FHWC", [(2, 3, 4, 3)]),
    ("FCHW", [(2, 3, 4, 5)]),
])
def test_layouts(layout, shapes):
    rng = np.random.default_rng(1)
    samples = [rng.integers(40, 90, size=s, dtype=np.uint8) for s in shapes]
    samples[0].reshape(-1)[:3] = 7  # a sparse low bin
    check_op(ndd.equalize, samples, lambda s: ref_equalize(s, layout), layout=layout,
             all_modes=layout == "HWC")


def test_constant_channel_unchanged():
    x = np.full((3, 4, 2), 77, np.uint8)
    x[..., 1] = np.arange(12, dtype=np.uint8).reshape(3, 4)
    out = np.asarray(ndd.equalize(x))
    assert (out[..., 0] == 77).all()
    assert out[..., 1].max() == 255
    assert out[..., 1].min() == 0


def test_equalize_errors():
    with raises_at_call(TypeError, match="equalize: input 0 has dtype f32; only uint8"):
        ndd.equalize(np.zeros((4, 4), np.float32))
    with raises_at_call(ValueError, match="equalize: input 0 has layout 'DHWC'"):
        ndd.equalize(ndd.as_tensor(np.zeros((2, 2, 2, 1), np.uint8), layout="DHWC"))
    with raises_at_call(TypeError, match="unexpected keyword argument 'bins'"):
        ndd.equalize(np.zeros((4, 4), np.uint8), bins=3)


def test_one_launch_per_ragged_batch():
    rng = np.random.default_rng(2)
    batch = ndd.as_batch([rng.integers(0, 256, s, dtype=np.uint8) for s in [(3, 5, 3), (9, 2, 3)]],
                         layout="HWC").gpu()  # fmt: skip
    with ndd.profile() as prof:
        ndd.equalize(batch).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1
