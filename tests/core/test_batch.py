"""Batch: construction, selection, per-sample slicing, conversion, packing, repr."""

import numpy as np
import pytest
import torch

import ndd_triton as ndd


def test_batch_from_list_ragged_and_scalars():
    b = ndd.batch([[1, 2], [3, 4, 5]])
    assert b.batch_size == 2 and b.dtype == ndd.int32 and b.shape == [(2,), (3,)]
    s = ndd.batch([1, 2, 3])
    assert s.shape == [(), (), ()] and s.ndim == 0
    with pytest.raises(RuntimeError, match="same sample dim"):
        ndd.batch([np.zeros(2), np.zeros((2, 2))])
    with pytest.raises(ValueError, match="Element type must be specified"):
        ndd.batch([])
    assert ndd.batch([], dtype=ndd.float32).batch_size == 0
    with pytest.raises(TypeError, match="different dtypes"):
        ndd.batch([np.zeros(2, np.uint8), np.zeros(2, np.float32)])
    assert ndd.batch([np.zeros(2, np.uint8), np.array([3.7, 300.5])], dtype=ndd.uint8).dtype == \
        ndd.uint8


def test_batch_from_single_array_splits_outer_dim():
    b = ndd.batch(np.zeros((4, 2, 3)))
    assert b.batch_size == 4 and b.shape == [(2, 3)] * 4
    t = ndd.as_batch(torch.arange(6).reshape(3, 2))
    assert t.select(2).torch().tolist() == [4, 5]


def test_as_batch_wraps_batch_copies():
    a = np.zeros((2, 3), np.float32)
    wrapped, copied = ndd.as_batch([a]), ndd.batch([a])
    a[0, 0] = 5
    assert np.asarray(wrapped.select(0))[0, 0] == 5
    assert np.asarray(copied.select(0))[0, 0] == 0
    assert ndd.as_batch(wrapped) is wrapped
    assert ndd.batch(wrapped) is not wrapped


def test_select_variants():
    b = ndd.batch([np.full(2, i) for i in range(5)])
    assert isinstance(b.select(1), ndd.Tensor) and b.select(-1).torch().tolist() == [4, 4]
    assert b.select(np.int64(2)).torch().tolist() == [2, 2]
    sub = b.select([3, 0, 3])
    assert [s.torch()[0].item() for s in sub] == [3, 0, 3]
    assert [s.torch()[0].item() for s in b.select(slice(1, 4, 2))] == [1, 3]
    assert b.select(...) is b and b.select(slice(None)) is b
    with pytest.raises(IndexError, match="out of range"):
        b.select(5)
    with pytest.raises(TypeError, match="Batch.select expects"):
        b.select((1, 0))
    with pytest.raises(TypeError, match="not subscriptable"):
        b[0]
    with pytest.raises(TypeError):
        len(b)


def test_tensors_view_is_consistent():
    b = ndd.batch([np.full(1, i) for i in range(5)])
    view = b.tensors[1:4]
    assert len(view) == 3
    assert [t.item() for t in view] == [1, 2, 3]
    assert view[0].item() == 1 and view[-1].item() == 3
    assert [t.item() for t in view.tolist()] == [1, 2, 3]
    assert [t.item() for t in view.as_batch()] == [1, 2, 3]
    with pytest.raises(IndexError):
        b.tensors[7]


def test_per_sample_slice_with_batch_bounds():
    b = ndd.batch([np.arange(10), np.arange(10, 20)])
    first = b.slice[0]
    assert [t.item() for t in first] == [0, 10]
    starts, stops = ndd.batch([0, 1]), ndd.batch([6, 8])
    steps = ndd.batch([2, 3])
    sliced = b.slice[starts:stops:steps]
    assert [t.torch().tolist() for t in sliced] == [[0, 2, 4], [11, 14, 17]]
    assert b.slice[...] is b
    with pytest.raises(RuntimeError, match="sample 1: Index 5 is out of range"):
        ndd.batch([np.arange(6), np.arange(3)]).slice[5]


def test_torch_conversion_rules():
    uniform = ndd.batch(np.arange(12).reshape(3, 4))
    dense = uniform.torch()
    assert dense.shape == (3, 4)
    assert uniform.torch(copy=False).data_ptr() == dense.data_ptr()
    assert uniform.torch(copy=True).data_ptr() != dense.data_ptr()
    ragged = ndd.batch([np.ones(2), np.ones(3)])
    with pytest.raises(ValueError, match="non-uniform shape"):
        ragged.torch()
    padded = ragged.torch(pad=True)
    assert padded.tolist() == [[1, 1, 0], [1, 1, 1]]
    with pytest.raises(ValueError, match="without a copy"):
        ragged.torch(copy=False, pad=True)


def test_gpu_batch_is_one_packed_buffer():
    b = ndd.batch([np.ones((2, 3), np.uint8), np.zeros((4, 1), np.uint8)]).gpu()
    storage = b._storage_or_raise()
    assert storage.buffer is not None and storage.buffer.numel() == 10
    assert storage.offsets.tolist() == [0, 6]
    assert b.device.device_type == "gpu"
    back = b.cpu()
    assert [s.shape for s in back] == [(2, 3), (4, 1)]
    assert b.gpu() is b


def test_batch_properties_and_broadcast():
    b = ndd.Batch.broadcast(np.array([1, 2], np.int64), 3)
    assert b.batch_size == 3 and b.dtype == ndd.int64 and b.layout is None
    c = ndd.batch(np.zeros((2, 4, 4, 3), np.uint8), layout="HWC")
    assert c.layout == "HWC" and c.ndim == 3
    with pytest.raises(ValueError, match="same number of dimensions"):
        ndd.batch([np.zeros((2, 2))], layout="HWC")
    assert [t.shape for t in c] == [(4, 4, 3)] * 2


def test_batch_repr():
    b = ndd.batch([[1, 2], [3]])
    assert repr(b) == ('Batch(\n    [1 2],\n    [3],\n    dtype=i32,\n    device="cpu",\n'
                       "    num_samples=2,\n    shape=[(2,), (1,)])")


def test_ragged_1d_storage_samples_are_views_at_their_offsets():
    import torch

    from ndd_triton.core.device import Device
    from ndd_triton.core.storage import BatchStorage

    for shapes in ([(5,), (0,), (3,), (7,)], [(2, 3), (1, 4)], [(4,)] * 3):
        storage = BatchStorage.allocate(shapes, torch.uint8, Device.CPU)
        buffer = storage.buffer
        assert buffer is not None
        buffer.copy_(torch.arange(buffer.numel(), dtype=torch.uint8))
        offsets = storage.offsets
        for sample, shape, start in zip(storage.samples, shapes, offsets, strict=True):
            assert tuple(sample.shape) == shape
            assert sample.numel() == 0 or sample.data_ptr() == buffer.data_ptr() + int(start)
            flat = torch.arange(int(start), int(start) + sample.numel(), dtype=torch.uint8)
            assert torch.equal(sample.reshape(-1), flat)


def test_numpy_samples_are_their_own_host_views():
    """A batch of uncopied NumPy arrays hands ops those arrays as its samples' NumPy views;
    arrays that were copied on the way in (dtype change, byte order, read-only, strided,
    `batch`'s copy) get views of the copies, as every other batch."""
    from ndd_triton.core.host_views import sample_arrays

    arrays = [np.arange(6, dtype=np.uint8).reshape(2, 3),
              np.arange(12, dtype=np.uint8).reshape(3, 4)[:1]]  # (a view: C-contiguous)
    storage = ndd.as_batch(arrays)._storage_or_raise()
    views = sample_arrays(storage, "test")
    assert all(v is a for v, a in zip(views, arrays, strict=True))
    assert all(np.shares_memory(v, t.numpy()) and v.shape == tuple(t.shape)
               for v, t in zip(views, storage.samples, strict=True))  # fmt: skip
    readonly = np.arange(3, dtype=np.uint8)
    readonly.flags.writeable = False
    for items, kwargs in (([arrays[0]], {"dtype": ndd.int32}), ([arrays[0].astype(">u2")], {}),
                          ([readonly], {}), ([np.arange(8, dtype=np.uint8)[::2]], {})):
        storage = ndd.as_batch(items, **kwargs)._storage_or_raise()
        views = sample_arrays(storage, "test")
        assert views[0] is not items[0]
        np.testing.assert_array_equal(views[0], items[0])
    copied = ndd.batch(arrays)._storage_or_raise()
    assert not np.shares_memory(sample_arrays(copied, "test")[0], arrays[0])
