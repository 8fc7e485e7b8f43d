"""readers.Numpy: arrays, ROI arguments and out-of-bounds policies (core.md §14.4)."""

from __future__ import annotations

import numpy as np
import pytest

import ndd_triton as ndd


@pytest.fixture
def arrays(tmp_path):
    """Three .npy files of different dtypes-compatible shapes (all int16), plus a distractor."""
    data = {f"s{i}.npy": np.arange(i * 100, i * 100 + (4 + i) * 5, dtype=np.int16).reshape(4 + i, 5)
            for i in range(3)}
    (tmp_path / "sub").mkdir()
    for name, array in data.items():
        np.save(tmp_path / name, array)
    fortran = np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3))
    np.save(tmp_path / "sub" / "f.npy", fortran)
    (tmp_path / "notes.txt").write_text("not an array")
    data["sub/f.npy"] = np.arange(6, dtype=np.int16).reshape(2, 3)
    return tmp_path, data


def read_all(reader, batch_size=None):
    if batch_size is None:
        return [np.asarray(t) for (t,) in reader.next_epoch()]
    return [np.asarray(t) for (b,) in reader.next_epoch(batch_size=batch_size) for t in b]


def test_whole_arrays(arrays):
    root, data = arrays
    got = read_all(ndd.readers.Numpy(file_root=str(root)))
    expected = [data[k] for k in sorted(data)]
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
        assert g.dtype == np.int16


def test_files_and_dont_use_mmap(arrays):
    root, data = arrays
    reader = ndd.readers.Numpy(file_root=str(root), files=["s2.npy", "s0.npy"], dont_use_mmap=True)
    (batch,) = next(iter(reader.next_epoch(batch_size=2)))
    assert batch.dtype == ndd.int16
    assert batch.shape == [(6, 5), (4, 5)]
    np.testing.assert_array_equal(np.asarray(batch.select(0)), data["s2.npy"])
    assert ndd.readers.source_info(batch.select(1)) == "s0.npy"


def test_absolute_roi_on_selected_axes(arrays):
    root, data = arrays
    reader = ndd.readers.Numpy(file_root=str(root), files=["s1.npy"], roi_start=[1],
                               roi_end=[4], roi_axes=[1])
    (got,) = read_all(reader)
    np.testing.assert_array_equal(got, data["s1.npy"][:, 1:4])
    shaped = ndd.readers.Numpy(file_root=str(root), files=["s1.npy"], roi_start=[2, 1],
                               roi_shape=[2, 3])
    np.testing.assert_array_equal(read_all(shaped)[0], data["s1.npy"][2:4, 1:4])


def test_relative_roi(arrays):
    root, data = arrays
    reader = ndd.readers.Numpy(file_root=str(root), files=["s0.npy", "s2.npy"],
                               rel_roi_start=[0.5, 0.2], rel_roi_end=[1.0, 0.6])
    got = read_all(reader, batch_size=2)
    np.testing.assert_array_equal(got[0], data["s0.npy"][2:4, 1:3])
    np.testing.assert_array_equal(got[1], data["s2.npy"][3:6, 1:3])


def test_out_of_bounds_policies(arrays):
    root, data = arrays
    common = {"file_root": str(root), "files": ["s0.npy"], "roi_start": [-1, 3],
              "roi_end": [2, 7]}
    with pytest.raises(RuntimeError, match=r"axis 0: the ROI \[-1, 2\) is out of bounds for "
                                           "extent 4; use out_of_bounds_policy"):
        next(iter(ndd.readers.Numpy(**common).next_epoch()))
    padded = read_all(ndd.readers.Numpy(**common, out_of_bounds_policy="pad", fill_value=-7))[0]
    expected = np.full((3, 4), -7, np.int16)
    expected[1:3, 0:2] = data["s0.npy"][0:2, 3:5]
    np.testing.assert_array_equal(padded, expected)
    trimmed = read_all(ndd.readers.Numpy(**common, out_of_bounds_policy="trim_to_shape"))[0]
    np.testing.assert_array_equal(trimmed, data["s0.npy"][0:2, 3:5])


def test_gpu_output(arrays):
    root, data = arrays
    reader = ndd.readers.Numpy(file_root=str(root), files=["s0.npy"], device="gpu")
    (batch,) = next(iter(reader.next_epoch(batch_size=1)))
    assert batch.device.device_type == "gpu"
    np.testing.assert_array_equal(batch.cpu().torch()[0].numpy(), data["s0.npy"])


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"out_of_bounds_policy": "wrap"}, ValueError,
     "'out_of_bounds_policy' must be one of error, pad, trim_to_shape; got 'wrap'"),
    ({"roi_start": [1], "rel_roi_start": [0.5]}, ValueError,
     "'roi_start' and 'rel_roi_start' cannot be given together"),
    ({"roi_end": [1], "roi_shape": [1]}, ValueError, "'roi_end' and 'roi_shape' cannot"),
    ({"roi_start": [1, 2], "roi_axes": [0]}, ValueError, "one value per roi_axes entry"),
    ({"roi_start": ["a"]}, TypeError, "'roi_start' expects a list of ints"),
    ({"fill_value": "x"}, TypeError, "'fill_value' expects a number; got str"),
    ({"file_filter": 3}, TypeError, "'file_filter' expects a str or a list of str; got int"),
])  # fmt: skip
def test_constructor_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        ndd.readers.Numpy(file_root="x", **kwargs)


def test_runtime_errors(arrays, tmp_path):
    root, _ = arrays
    bad_rank = ndd.readers.Numpy(file_root=str(root), files=["s0.npy"], roi_start=[0, 0, 0])
    with pytest.raises(RuntimeError, match=r"has shape \(4, 5\); the ROI has 3 values"):
        next(iter(bad_rank.next_epoch()))
    reversed_roi = ndd.readers.Numpy(file_root=str(root), files=["s0.npy"], roi_start=[3, 0],
                                     roi_end=[1, 5])
    with pytest.raises(RuntimeError, match="axis 0: the ROI end 1 is before its start 3"):
        next(iter(reversed_roi.next_epoch()))
    not_npy = ndd.readers.Numpy(file_root=str(root), files=["notes.txt"])
    with pytest.raises(RuntimeError, match=r"cannot read .*notes\.txt.* as a \.npy file"):
        next(iter(not_npy.next_epoch()))
    with pytest.raises(RuntimeError, match="does not exist or is not a directory"):
        ndd.readers.Numpy(file_root=str(tmp_path / "nope")).next_epoch()
    mixed = ndd.readers.Numpy(file_root=str(root), files=["s0.npy", "mixed.npy"])
    np.save(root / "mixed.npy", np.zeros(2, np.float32))
    with pytest.raises(RuntimeError, match="the samples of one batch must share a dtype"):
        next(iter(mixed.next_epoch(batch_size=2)))


@pytest.mark.parametrize("dtype", [np.uint16, np.uint32, np.uint64, np.float16, np.bool_,
                                   np.int8, np.float64])  # fmt: skip
def test_every_numpy_dtype(tmp_path, dtype):
    for i in range(2):
        np.save(tmp_path / f"a{i}.npy", (np.arange(6 + i) % 2).astype(dtype))
    (batch,) = next(iter(ndd.readers.Numpy(file_root=str(tmp_path)).next_epoch(batch_size=2)))
    assert batch.dtype == ndd.dtype(np.dtype(dtype))
    np.testing.assert_array_equal(np.asarray(batch.select(1)), (np.arange(7) % 2).astype(dtype))


def test_batch_samples_must_share_ndim(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(3, np.int8))
    np.save(tmp_path / "b.npy", np.zeros((1, 2), np.int8))
    reader = ndd.readers.Numpy(file_root=str(tmp_path))
    with pytest.raises(RuntimeError, match="must have the same number of dimensions; got shapes "
                                           r"\[\(3,\), \(1, 2\)\]"):
        next(iter(reader.next_epoch(batch_size=2)))
