"""multi_paste: NumPy reference pasting regions in order; both backends; spec example."""

import numpy as np
import pytest
from _check import raises_at_call

import ndd_triton as ndd


def _images(shapes, dtype=np.uint8, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(1, 255, size=s).astype(dtype) for s in shapes]


def _run(backend, inputs, **kwargs):
    if backend == "gpu":
        inputs = [x.gpu() for x in inputs]
    out = ndd.multi_paste(*inputs, **kwargs)
    assert out.device.device_type == backend
    return [np.asarray(s) for s in out.cpu()]


def paste_ref(canvas, c, dtype, regions):
    out = np.zeros((*canvas, c), dtype)
    for src, (iy, ix), (h, w), (oy, ox) in regions:
        out[oy : oy + h, ox : ox + w] = src[iy : iy + h, ix : ix + w]
    return out


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_multi_paste_in_ids_ragged(backend):
    imgs = _images([(6, 7, 3), (9, 5, 3), (4, 4, 3)])
    in_ids = [np.array([0, 2, 1]), np.array([1]), np.array([2, 2])]
    anchors = [np.array([[1, 1], [0, 0], [2, 0]]), np.array([[3, 1]]), np.array([[0, 0], [1, 1]])]
    shapes = [np.array([[3, 4], [4, 4], [5, 5]]), np.array([[6, 4]]), np.array([[4, 4], [2, 2]])]
    outs = [np.array([[0, 0], [5, 6], [3, 3]]), np.array([[0, 1]]), np.array([[0, 0], [9, 9]])]
    got = _run(
        backend,
        [ndd.as_batch(imgs, layout="HWC")],
        in_ids=ndd.as_batch(in_ids),
        in_anchors=ndd.as_batch(anchors),
        shapes=ndd.as_batch(shapes),
        out_anchors=ndd.as_batch(outs),
        output_size=[11, 12],
    )
    for i in range(3):
        regions = [
            (imgs[j], anchors[i][r], shapes[i][r], outs[i][r]) for r, j in enumerate(in_ids[i])
        ]
        np.testing.assert_array_equal(got[i], paste_ref((11, 12), 3, np.uint8, regions))


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_multi_paste_several_inputs_relative_and_dtype(backend):
    a = _images([(8, 8, 1), (8, 8, 1)], seed=1)
    b = _images([(8, 8, 1), (8, 8, 1)], seed=2)
    got = _run(
        backend,
        [ndd.as_batch(a, layout="HWC"), ndd.as_batch(b, layout="HWC")],
        in_anchors_rel=[[0.25, 0.0], [0.5, 0.5]],
        shapes_rel=[[0.5, 0.5], [0.5, 0.5]],
        out_anchors_rel=[[0.0, 0.5], [0.25, 0.25]],
        dtype=ndd.float32,
    )
    for i in range(2):
        regions = [(a[i], (2, 0), (4, 4), (0, 4)), (b[i], (4, 4), (4, 4), (2, 2))]
        np.testing.assert_array_equal(got[i], paste_ref((8, 8), 1, np.float32, regions))


def test_multi_paste_spec_example_and_one_launch():
    ones = np.ones((4, 4, 1), np.uint8)
    batch = ndd.as_batch([ones, 2 * ones], layout="HWC")
    kwargs = {
        "in_ids": ndd.as_batch([np.array([0, 1]), np.array([1])]),
        "out_anchors": ndd.as_batch([np.array([[0, 0], [2, 2]]), np.array([[1, 1]])]),
        "shapes": ndd.as_batch([np.array([[2, 2], [2, 2]]), np.array([[2, 2]])]),
    }
    out = [np.asarray(s)[..., 0] for s in ndd.multi_paste(batch, **kwargs)]
    np.testing.assert_array_equal(out[0], [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 2, 2], [0, 0, 2, 2]])
    assert out[1].sum() == 8
    assert (out[1][1:3, 1:3] == 2).all()
    with ndd.profile() as prof:
        ndd.multi_paste(batch.gpu(), **kwargs).evaluate()
    assert prof.records[0].gpu_launches == 1


def test_multi_paste_errors():
    batch = ndd.as_batch(_images([(4, 4, 3), (5, 5, 3)]), layout="HWC")
    with raises_at_call(
        RuntimeError, match="argument 'output_size' is required when the input shapes differ"
    ):
        ndd.multi_paste(batch, in_ids=ndd.as_batch([np.array([0]), np.array([1])]))
    with raises_at_call(
        RuntimeError, match="sample 0 region 0: The pasted region must be within output bounds"
    ):
        ndd.multi_paste(
            batch,
            in_ids=ndd.as_batch([np.array([0]), np.array([1])]),
            output_size=[4, 4],
            out_anchors=[[2, 2]],
        )
    with raises_at_call(ValueError, match="argument 'in_ids' sample 1: index 5 is out of range"):
        ndd.multi_paste(
            batch, in_ids=ndd.as_batch([np.array([0]), np.array([5])]), output_size=[6, 6]
        )
    with raises_at_call(
        ValueError,
        match=r"argument 'shapes' sample 0: expected 1 \(y, x\) "
        r"pairs",
    ):
        ndd.multi_paste(
            batch,
            in_ids=ndd.as_batch([np.array([0]), np.array([1])]),
            output_size=[6, 6],
            shapes=[1, 2, 3],
        )
    with raises_at_call(RuntimeError, match="the source region"):
        ndd.multi_paste(
            batch,
            in_ids=ndd.as_batch([np.array([0]), np.array([1])]),
            output_size=[9, 9],
            in_anchors=[[3, 3]],
            shapes=[[3, 3]],
        )


def test_multi_paste_row_tiles_split_rows_and_samples(small_tiles):
    imgs = _images([(6, 7, 3), (9, 5, 3), (4, 4, 3)])
    in_ids = [np.array([0, 2, 1]), np.array([1]), np.array([2, 2])]
    anchors = [np.array([[1, 1], [0, 0], [2, 0]]), np.array([[3, 1]]), np.array([[0, 0], [1, 1]])]
    shapes = [np.array([[3, 4], [4, 4], [5, 5]]), np.array([[6, 4]]), np.array([[4, 4], [2, 2]])]
    outs = [np.array([[0, 0], [5, 6], [3, 3]]), np.array([[0, 1]]), np.array([[0, 0], [6, 9]])]
    got = _run("gpu", [ndd.as_batch(imgs, layout="HWC")], in_ids=ndd.as_batch(in_ids),
               in_anchors=ndd.as_batch(anchors), shapes=ndd.as_batch(shapes),
               out_anchors=ndd.as_batch(outs), output_size=[9, 13])  # fmt: skip
    for i in range(3):
        regions = [(imgs[j], anchors[i][r], shapes[i][r], outs[i][r])
                   for r, j in enumerate(in_ids[i])]  # fmt: skip
        np.testing.assert_array_equal(got[i], paste_ref((9, 13), 3, np.uint8, regions))
