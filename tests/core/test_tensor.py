"""Tensor: construction (copy vs wrap), inference rules, properties, conversion, indexing, repr."""

import numpy as np
import pytest
import torch

import ndd_triton as ndd


@pytest.mark.parametrize(("data", "dtype", "shape"), [
    (5, ndd.int32, ()), (2.5, ndd.float32, ()), (True, ndd.bool, ()), ([1, 2, 3], ndd.int32, (3,)),
    ([1.0, 2, 3], ndd.float32, (3,)), ([[1, 2], [3, 4]], ndd.int32, (2, 2)), ([], ndd.float32, (0,)),
    (np.zeros((2, 3), np.float64), ndd.float64, (2, 3)), (torch.zeros(4, dtype=torch.int64),
                                                         ndd.int64, (4,)),
])
def test_inference_from_python_and_arrays(data, dtype, shape):
    t = ndd.tensor(data)
    assert t.dtype == dtype
    assert t.shape == shape
    assert t.ndim == len(shape)
    assert t.device == ndd.Device("cpu")


def test_bad_python_data():
    with pytest.raises(ValueError, match="ragged"):
        ndd.tensor([[1, 2], [3]])
    with pytest.raises(RuntimeError, match="cannot convert str"):
        ndd.tensor("abc")
    with pytest.raises(ValueError, match="Either data, expression or batch and index"):
        ndd.tensor(None)
    with pytest.raises(TypeError, match="complex"):
        ndd.tensor(np.zeros(2, np.complex64))


def test_as_tensor_shares_memory_tensor_copies():
    a = np.arange(6, dtype=np.float32)
    wrapped, copied = ndd.as_tensor(a), ndd.tensor(a)
    a[0] = 42
    assert np.asarray(wrapped)[0] == 42
    assert np.asarray(copied)[0] == 0
    t = torch.arange(3)
    assert ndd.as_tensor(t).torch().data_ptr() == t.data_ptr()


def test_non_contiguous_sources_are_copied_correctly():
    a = np.arange(12).reshape(3, 4)
    for src in (a.T, a[:, ::-1], a[::2]):
        np.testing.assert_array_equal(np.asarray(ndd.tensor(src)), src)
        np.testing.assert_array_equal(np.asarray(ndd.as_tensor(src)), src)


def test_dtype_conversion_list_vs_array():
    np.testing.assert_array_equal(np.asarray(ndd.tensor([1.7, -1.7, 2.5], dtype=ndd.int32)),
                                  [1, -1, 2])
    np.testing.assert_array_equal(
        np.asarray(ndd.tensor(np.array([1.7, -1.7, 2.5]), dtype=ndd.int32)), [2, -2, 3])
    with pytest.raises(OverflowError):
        ndd.tensor([300], dtype=ndd.uint8)
    np.testing.assert_array_equal(np.asarray(ndd.tensor(np.array([300.0, -5]), dtype=ndd.uint8)),
                                  [255, 0])


def test_properties_and_item():
    t = ndd.tensor(np.zeros((2, 3, 4), np.int16), layout="HWC")
    assert (t.size, t.itemsize, t.nbytes, t.layout) == (24, 2, 48, "HWC")
    assert ndd.tensor([[7]]).item() == 7
    with pytest.raises(ValueError, match="Tensor has 24 elements, expected 1"):
        t.item()
    with pytest.raises(ValueError, match="same number of dimensions"):
        ndd.tensor(np.zeros((2, 2)), layout="HWC")


def test_torch_and_dlpack_and_array_interop():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    t = ndd.as_tensor(a)
    assert t.torch().dtype == torch.int32
    assert t.torch(copy=True).data_ptr() != t.torch().data_ptr()
    assert torch.from_dlpack(t).tolist() == a.tolist()
    assert t.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.asarray(t), a)
    with pytest.raises(AttributeError, match="This is not a GPU tensor"):
        _ = t.__cuda_array_interface__


def test_gpu_roundtrip_and_interfaces():
    a = np.arange(6, dtype=np.float32)
    g = ndd.as_tensor(a).gpu()
    assert g.device.device_type == "gpu" and g.device.device_id == 0
    assert g.gpu() is g
    with pytest.raises(TypeError, match="This is not a CPU tensor"):
        np.asarray(g)
    cai = g.__cuda_array_interface__
    assert cai["shape"] == (6,) and cai["typestr"] == "<f4"
    back = g.cpu()
    np.testing.assert_array_equal(np.asarray(back), a)
    assert back.cpu() is back
    assert ndd.tensor(a, device="gpu").device.device_type == "gpu"
    assert g.to_device("gpu") is g and g.to_device("gpu", force_copy=True) is not g


def test_indexing_and_layouts():
    a = np.arange(24).reshape(2, 3, 4)
    t = ndd.as_tensor(a, layout="HWC")
    np.testing.assert_array_equal(np.asarray(t[1]), a[1])
    assert t[1].layout == "WC"
    assert t[:, 1:3].layout == "HWC"
    assert t[1, 2].layout == "C"
    assert t[1, 2, 3].layout is None and t[1, 2, 3].item() == a[1, 2, 3]
    np.testing.assert_array_equal(np.asarray(t[..., ::-2]), a[..., ::-2])
    np.testing.assert_array_equal(np.asarray(t[-1, ::-1]), a[-1, ::-1])
    np.testing.assert_array_equal(np.asarray(t[None, 0]), a[None, 0])
    assert t[1.5].shape == (3, 4)
    assert t[ndd.tensor(1)].shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(t[1:10]), a[1:10])
    with pytest.raises(RuntimeError, match="Index 5 is out of range for axis 0 of length 2"):
        t[5]
    with pytest.raises(ValueError, match=r"Number of ranges \(4\) is greater"):
        t[0, 0, 0, 0]
    with pytest.raises(RuntimeError, match="Array indices must be scalar"):
        t[[0, 1]]
    with pytest.raises(ValueError, match="invalid index 'a'"):
        t["a"]


def test_python_protocols():
    t = ndd.tensor([1, 2, 3])
    with pytest.raises(TypeError, match="has no len"):
        len(t)
    assert [x.item() for x in t] == [1, 2, 3]
    with pytest.raises(TypeError):
        hash(t)
    with pytest.raises(TypeError):
        float(t)
    assert bool(ndd.tensor(1)) is True and bool(ndd.tensor(0)) is False
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)


def test_repr_matches_dali_format():
    t = ndd.tensor(np.arange(6, dtype=np.uint8).reshape(2, 3))
    assert repr(t) == ('Tensor(\n    [[0 1 2]\n     [3 4 5]],\n    dtype=u8,\n    device="cpu",\n'
                       "    shape=(2, 3))")
    assert repr(ndd.tensor(3.5)) == 'Tensor(\n    3.5,\n    dtype=f32,\n    device="cpu",\n    shape=())'
    assert 'layout="HW"' in repr(ndd.tensor(np.zeros((1, 1)), layout="HW"))


def test_tensor_from_batch_stacks_and_pads():
    b = ndd.batch([np.ones((2, 2), np.uint8), np.ones((1, 3), np.uint8)], layout="HW")
    with pytest.raises(ValueError, match="non-uniform shape"):
        ndd.as_tensor(b)
    t = ndd.as_tensor(b, pad=True)
    assert t.shape == (2, 2, 3) and t.layout == "NHW"
    assert np.asarray(t).sum() == 7
