"""copy: a deep copy; the result must not share memory with the input."""

import numpy as np
import pytest
from _check import check_op

import ndd_triton as ndd


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.bool_, np.uint64])
def test_copy_ragged(dtype):
    rng = np.random.default_rng(0)
    samples = [rng.integers(0, 2, s).astype(dtype) for s in [(5, 7, 3), (1,) * 3, (30, 41, 3)]]
    check_op(ndd.copy, samples, lambda s: s.copy(), layout="HWC")


@pytest.mark.parametrize("backend", ["cpu", "gpu"])
def test_copy_is_deep_and_keeps_metadata(backend):
    source = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ndd.as_tensor(source, layout="HW")
    t = t.gpu() if backend == "gpu" else t
    out = ndd.copy(t)
    assert (out.layout, out.dtype, out.shape) == ("HW", ndd.int32, (2, 3))
    result = out.cpu().torch()
    result += 1
    np.testing.assert_array_equal(np.asarray(t.cpu()), np.arange(6).reshape(2, 3))


def test_copy_one_launch_per_ragged_batch():
    batch = ndd.as_batch([np.ones((3, 5), np.uint8), np.ones((9, 2), np.uint8)]).gpu()
    with ndd.profile() as prof:
        ndd.copy(batch).evaluate()
    (record,) = prof.records
    assert record.gpu_launches == 1


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_copy_row_tiles_split_samples(small_tiles, dtype):
    rng = np.random.default_rng(1)
    samples = [rng.integers(0, 200, s).astype(dtype) for s in [(7, 13, 3), (1, 1, 1), (9, 5, 2)]]
    check_op(ndd.copy, samples, lambda s: s.copy(), all_modes=False)
