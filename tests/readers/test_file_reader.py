"""readers.File: dataset discovery, outputs, iteration API and its errors (core.md §14)."""

from __future__ import annotations

import os
import threading

import numpy as np
import pytest
from reader_files import content, read_data, read_labels, write_files

import ndd_triton as ndd


def epoch_labels(reader, batch_size):
    return [read_labels(labels) for _, labels in reader.next_epoch(batch_size=batch_size)]


# ---- discovery -------------------------------------------------------------------------------
def test_file_root_classes_sorted_and_files_filtered(class_tree):
    reader = ndd.readers.File(file_root=str(class_tree))
    samples = list(reader.next_epoch())
    names = [ndd.readers.source_info(data) for data, _ in samples]
    assert names == ["b/sub/y.jpg", "b/x0.jpg", "b/x1.jpg", "c/UPPER.JPG", "c/z0.png",
                     "c/z1.jpg"]
    assert [int(np.asarray(label)[0]) for _, label in samples] == [0, 0, 0, 1, 1, 1]
    for (data, label), name in zip(samples, names, strict=True):
        assert bytes(np.asarray(data)) == content(name)
        assert data.dtype == ndd.uint8
        assert data.ndim == 1
        assert data.device == ndd.Device.CPU
        assert label.dtype == ndd.int32
        assert label.shape == (1,)


def test_case_sensitive_and_custom_filters(class_tree):
    sensitive = ndd.readers.File(file_root=class_tree, case_sensitive_filter=True)
    names = [ndd.readers.source_info(d) for d, _ in sensitive.next_epoch()]
    assert "c/UPPER.JPG" not in names
    assert len(names) == 5
    txt = ndd.readers.File(file_root=class_tree, file_filters=["*.txt"])
    assert [ndd.readers.source_info(d) for d, _ in txt.next_epoch()] == ["b/notes.txt"]
    only_c = ndd.readers.File(file_root=class_tree, dir_filters=["c"])
    assert [int(np.asarray(lbl)[0]) for _, lbl in only_c.next_epoch()] == [0, 0, 0]


def test_file_list_relative_to_its_folder(tmp_path):
    write_files(tmp_path, ["img/a.jpg", "img/b.jpg"])
    (tmp_path / "list.txt").write_text("img/b.jpg 7\n\nimg/a.jpg 3\n")
    reader = ndd.readers.File(file_list=str(tmp_path / "list.txt"))
    data, labels = next(iter(reader.next_epoch(batch_size=2)))
    assert read_data(data) == [content("img/b.jpg"), content("img/a.jpg")]
    assert read_labels(labels) == [7, 3]


def test_file_list_bad_line(tmp_path):
    (tmp_path / "list.txt").write_text("a.jpg seven\n")
    reader = ndd.readers.File(file_list=str(tmp_path / "list.txt"))
    with pytest.raises(RuntimeError, match=r"line 1: expected '<path> <integer label>'"):
        reader.next_epoch()


def test_files_and_labels(tmp_path):
    write_files(tmp_path, ["p.bin", "q.bin"])
    reader = ndd.readers.File(file_root=str(tmp_path), files=["q.bin", "p.bin"], labels=[5, 9])
    data, labels = next(iter(reader.next_epoch(batch_size=2)))
    assert read_data(data) == [content("q.bin"), content("p.bin")]
    assert read_labels(labels) == [5, 9]
    default = ndd.readers.File(file_root=str(tmp_path), files=["q.bin", "p.bin"])
    assert epoch_labels(default, 2) == [[0, 1]]


def test_missing_directory_fails_at_first_iteration(tmp_path):
    reader = ndd.readers.File(file_root=str(tmp_path / "nope"))
    with pytest.raises(RuntimeError, match="does not exist"):
        reader.next_epoch(batch_size=2)
    with pytest.raises(RuntimeError, match="one of the arguments 'file_root', 'file_list'"):
        ndd.readers.File().next_epoch()


def test_unreadable_file_surfaces_at_iteration(tmp_path):
    reader = ndd.readers.File(files=[str(tmp_path / "gone.jpg")])
    iterator = reader.next_epoch()
    with pytest.raises(RuntimeError, match=r"Cannot read file .*gone\.jpg"):
        next(iterator)


@pytest.mark.parametrize("mode", ["batch", "sample", "call"])
def test_a_transient_read_error_is_not_permanent(flat_files, mode):
    # After the error the reader behaves as a new one restored from its get_state(): the next
    # call reads the failed batch again (the rest of the interrupted epoch), then whole epochs.
    files = flat_files(6)["files"]
    reader = ndd.readers.File(files=files, enable_checkpointing=True)
    size = None if mode == "sample" else 2

    def labels(batch):
        return [int(np.asarray(t)[0]) for t in batch] if size else int(np.asarray(batch)[0])

    def epoch(r):
        if mode == "call":
            return [labels(r(batch_size=size)[1]) for _ in range(3)]
        return [labels(lbl) for _, lbl in r.next_epoch(batch_size=size)]

    os.rename(files[3], files[3] + ".away")
    for _ in range(2):  # the same error while the file is missing
        with pytest.raises(RuntimeError, match=r"Cannot read file .*f03\.bin"):
            epoch(reader)
    restored = ndd.readers.File(files=files)
    restored.set_state(reader.get_state())
    os.rename(files[3] + ".away", files[3])
    expected = {"batch": [[[2, 3], [4, 5]], [[0, 1], [2, 3], [4, 5]]],
                "sample": [[3, 4, 5], [0, 1, 2, 3, 4, 5]],
                "call": [[[2, 3], [4, 5], [0, 1]], [[2, 3], [4, 5], [0, 1]]]}[mode]
    assert [epoch(reader), epoch(reader)] == expected
    assert [epoch(restored), epoch(restored)] == expected


def test_empty_dataset_and_empty_shard(tmp_path, flat_files):
    (tmp_path / "cls").mkdir()
    with pytest.raises(RuntimeError, match="the dataset is empty"):
        ndd.readers.File(file_root=str(tmp_path)).next_epoch()
    reader = ndd.readers.File(**flat_files(2), shard_id=0, num_shards=3)
    with pytest.raises(RuntimeError, match="shard 0 of 3 is empty"):
        reader.next_epoch()


# ---- constructor errors ----------------------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"foo": 1}, TypeError, "unexpected keyword argument 'foo'"),
    ({"batch_size": 2}, TypeError, "unexpected keyword argument 'batch_size'; pass batch_size"),
    ({"shard_id": 2, "num_shards": 2}, ValueError,
     r"The shard_id=2 is invalid. Must be in range \[0..1\]."),
    ({"random_shuffle": "yes"}, TypeError, "'random_shuffle' expects a bool; got str"),
    ({"initial_fill": 0}, ValueError, "'initial_fill' must be >= 1; got 0"),
    ({"prefetch_queue_depth": 1.5}, TypeError, "'prefetch_queue_depth' expects an int"),
    ({"shuffle_after_epoch": True, "random_shuffle": True}, RuntimeError,
     "shuffle_after_epoch and random_shuffle"),
    ({"shuffle_after_epoch": True, "stick_to_shard": True}, RuntimeError,
     "shuffle_after_epoch and stick_to_shard"),
    ({"files": ["a"], "file_list": "l.txt"}, ValueError, "'files' and 'file_list' cannot"),
    ({"labels": [1]}, ValueError, "'labels' needs 'files'"),
    ({"files": ["a", "b"], "labels": [1]}, ValueError, "got 1 labels for 2 files"),
    ({"files": ["a"], "labels": ["x"]}, TypeError, "'labels' expects a list of ints"),
    ({"files": 3}, TypeError, "'files' expects a str or a list of str; got int"),
    ({"device": "gpu"}, ValueError, 'Invalid device "gpu" for operator readers__File'),
])  # fmt: skip
def test_constructor_errors(kwargs, error, message):
    with pytest.raises(error, match=message):
        ndd.readers.File(**kwargs)


def test_max_batch_size_is_first_positional(flat_files):
    reader = ndd.readers.File(3, **flat_files(6))
    assert reader.max_batch_size == 3
    with pytest.raises(ValueError, match="batch_size 4 is larger than the max_batch_size 3"):
        reader.next_epoch(batch_size=4)
    batches = list(reader.next_epoch())
    assert [b.batch_size for b, _ in batches] == [3, 3]
    with pytest.raises(TypeError, match="'max_batch_size' expects an int"):
        ndd.readers.File("x")


# ---- iteration API ---------------------------------------------------------------------------
def test_sample_mode_yields_tensors(flat_files):
    reader = ndd.readers.File(**flat_files(3))
    samples = list(reader.next_epoch())
    assert len(samples) == 3
    assert all(isinstance(d, ndd.Tensor) and isinstance(lbl, ndd.Tensor) for d, lbl in samples)


def test_batch_size_cannot_change(flat_files):
    reader = ndd.readers.File(**flat_files(4))
    epoch_labels(reader, 4)
    with pytest.raises(ValueError, match="batch_size 2 is different than the max_batch_size 4"):
        reader.next_epoch(batch_size=2)


def test_modes_cannot_mix(flat_files):
    reader = ndd.readers.File(**flat_files(4))
    epoch_labels(reader, 2)
    with pytest.raises(RuntimeError, match="Cannot mix samples, batches and _run/__call__"):
        reader.next_epoch()
    with pytest.raises(RuntimeError, match="Cannot mix samples, batches and _run/__call__"):
        reader()


def test_previous_epoch_must_be_exhausted(flat_files):
    reader = ndd.readers.File(**flat_files(4))
    iterator = reader.next_epoch(batch_size=2)
    next(iterator)
    with pytest.raises(RuntimeError, match="previous next_epoch\\(\\) call is not exhausted"):
        reader.next_epoch(batch_size=2)
    next(iterator)  # the last batch closes the epoch
    assert epoch_labels(reader, 2) == [[0, 1], [2, 3]]


def test_direct_calls(flat_files):
    reader = ndd.readers.File(**flat_files(3))
    steps = [reader() for _ in range(4)]  # direct calls run past the epoch end
    assert [int(np.asarray(label)[0]) for _, label in steps] == [0, 1, 2, 0]
    with pytest.raises(RuntimeError, match="batch size of direct calls must be uniform"):
        reader(batch_size=2)
    batched = ndd.readers.File(**flat_files(3))
    data, labels = batched(batch_size=2)
    assert isinstance(data, ndd.Batch)
    assert read_labels(labels) == [0, 1]


def test_next_epoch_arguments(flat_files):
    reader = ndd.readers.File(enable_checkpointing=True, **flat_files(2))
    with pytest.raises(TypeError, match="'ctx' expects an EvalContext or None; got int"):
        reader.next_epoch(ctx=3)
    with pytest.raises(NotImplementedError, match="not supported in capture mode"):
        reader.next_epoch(batch_size=1, capture=True)
    with pytest.raises(NotImplementedError, match="not supported in capture mode"):
        reader.next_epoch(batch_size=1, compile=True)  # the seeds' spelling of capture=True
    with pytest.raises(ValueError, match="'batch_size' must be >= 1; got 0"):
        reader.next_epoch(batch_size=0)
    plain = ndd.readers.File(**flat_files(2))
    with ndd.EvalContext() as ctx, pytest.warns(UserWarning, match="no operators were called"):
        assert epoch_labels_ctx(plain, ctx) == [[0, 1]]


def epoch_labels_ctx(reader, ctx):
    return [read_labels(lbl) for _, lbl in reader.next_epoch(batch_size=2, ctx=ctx,
                                                              capture=True)]


def test_get_metadata(flat_files):
    reader = ndd.readers.File(**flat_files(7), shard_id=1, num_shards=2, pad_last_batch=True)
    assert reader.get_metadata() == {"epoch_size": 7, "epoch_size_padded": 8,
                                     "number_of_shards": 2, "shard_id": 1, "pad_last_batch": 1,
                                     "stick_to_shard": 0}  # fmt: skip


def test_io_runs_on_prefetch_thread(flat_files):
    reader = ndd.readers.File(**flat_files(6), prefetch_queue_depth=2)
    seen = []
    load = reader._source.load

    def recording_load(indices):
        seen.append(threading.current_thread().name)
        return load(indices)

    reader._source.load = recording_load
    assert epoch_labels(reader, 2) == [[0, 1], [2, 3], [4, 5]]
    assert seen
    assert all(name.startswith("ndd-reader-") for name in seen)
    assert threading.current_thread().name not in seen


def test_outputs_feed_operators(flat_files):
    reader = ndd.readers.File(**flat_files(2))
    data, labels = next(iter(reader.next_epoch(batch_size=2)))
    assert labels.torch().shape == (2, 1)
    padded = data.torch(pad=True)
    assert padded.shape[0] == 2
    assert padded.dtype == ndd.uint8.torch_dtype
    assert bytes(data.select(1).torch().numpy()) == content("f01.bin")


def test_get_property(class_tree):
    reader = ndd.readers.File(file_root=str(class_tree))
    data, _ = next(iter(reader.next_epoch(batch_size=2)))
    info = ndd.get_property(data, key="source_info")
    assert isinstance(info, ndd.Batch)
    assert [bytes(np.asarray(t)) for t in info] == [b"b/sub/y.jpg", b"b/x0.jpg"]
    single = ndd.get_property(data.select(1), key="source_info")
    assert bytes(np.asarray(single)) == b"b/x0.jpg"
    assert bytes(np.asarray(ndd.get_property(data.select(0), key="layout"))) == b""
    image = ndd.tensor(np.zeros((2, 2, 3), np.uint8), layout="HWC")
    assert bytes(np.asarray(ndd.get_property(image, key="layout"))) == b"HWC"
    assert bytes(np.asarray(ndd.get_property(image, key="source_info"))) == b""
    with pytest.raises(ValueError, match="'key' must be one of source_info, layout; got 'size'"):
        ndd.get_property(data, key="size")
    with pytest.raises(TypeError, match="input expects a Tensor or a Batch; got list"):
        ndd.get_property([1], key="layout")
    with pytest.raises(ValueError, match="batch_size 3 does not match the input batch size 2"):
        ndd.get_property(data, key="layout", batch_size=3)


def test_loading_error_is_raised_again_by_later_calls(tmp_path):
    reader = ndd.readers.File(files=[str(tmp_path / "gone.jpg")])
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"Cannot read file .*gone\.jpg"):
            next(reader.next_epoch())


def test_signature_lists_every_keyword():
    import inspect

    params = inspect.signature(ndd.readers.File).parameters
    assert list(params)[:4] == ["max_batch_size", "name", "device", "num_inputs"]
    assert params["file_root"].kind is inspect.Parameter.KEYWORD_ONLY
    assert params["initial_fill"].default == 1024
    assert params["seed"].default == -1
    assert "shuffle_after_epoch" in params
    assert "enable_checkpointing" in params


def test_stopped_prefetcher_is_reported(flat_files):
    reader = ndd.readers.File(**flat_files(4))
    iterator = reader.next_epoch(batch_size=1)
    next(iterator)
    prefetcher = reader._holder["prefetcher"]
    prefetcher.stop()
    prefetcher._thread.join()
    while not prefetcher._queue.empty():  # drop what was loaded ahead
        prefetcher._queue.get()
    with pytest.raises(RuntimeError, match="prefetch thread has stopped; create a new reader"):
        next(iterator)


def test_repr_shows_non_default_keywords(tmp_path):
    reader = ndd.readers.File(file_root=str(tmp_path), random_shuffle=True, seed=5)
    assert repr(reader) == (f"readers.File(file_root={str(tmp_path)!r}, random_shuffle=True, "
                            "seed=5)")


def test_read_bytes_batch_reads_every_file_exactly(tmp_path, monkeypatch):
    from ndd_triton.readers import _file

    names = write_files(tmp_path, [f"f{i}.bin" for i in range(5)] + ["empty.bin"])
    (tmp_path / "empty.bin").write_bytes(b"")
    paths = [str(tmp_path / n) for n in names]
    expected = [(tmp_path / n).read_bytes() for n in names]
    fast = _file.read_bytes_batch(paths)
    assert [bytes(s.numpy()) for s in fast.samples] == expected
    monkeypatch.delattr(_file.os, "preadv")  # the portable path gives the same bytes
    assert [bytes(s.numpy()) for s in _file.read_bytes_batch(paths).samples] == expected


def test_a_file_that_shrank_since_it_was_sized_is_an_error(tmp_path, monkeypatch):
    from ndd_triton.readers import _file

    write_files(tmp_path, ["a.bin"])
    monkeypatch.setattr(_file, "file_size", lambda path: 1000)  # larger than the file
    with pytest.raises(RuntimeError, match=r"a\.bin' changed while reading: expected 1000"):
        _file.read_bytes_batch([str(tmp_path / "a.bin")])


def test_reads_check_the_sizes_of_the_last_epoch_instead_of_stat(tmp_path, monkeypatch):
    """Sizes from an earlier read are trusted without a stat; a file that grew, shrank or is no
    longer empty is noticed by the read itself and the batch is read again with fresh sizes."""
    from ndd_triton.readers import _file

    paths = [tmp_path / n for n in ("a.bin", "b.bin", "c.bin")]
    for path, data in zip(paths, (b"0123456789", b"x" * 20, b""), strict=True):
        path.write_bytes(data)
    stats: list[str] = []
    real = _file.file_size
    monkeypatch.setattr(_file, "file_size", lambda p: stats.append(p) or real(p))
    known = [-1, -1, -1]
    first = _file.read_bytes_batch([str(p) for p in paths], known)
    assert known == [10, 20, 0] and len(stats) == 3
    assert [bytes(np.asarray(s)) for s in first.samples] == [b"0123456789", b"x" * 20, b""]
    stats.clear()
    again = _file.read_bytes_batch([str(p) for p in paths], known)
    assert stats == [] and bytes(np.asarray(again.samples[1])) == b"x" * 20
    for path, data in zip(paths, (b"0123456789abcde", b"short", b"new"), strict=True):
        path.write_bytes(data)
    changed = _file.read_bytes_batch([str(p) for p in paths], known)
    assert [bytes(np.asarray(s)) for s in changed.samples] == [b"0123456789abcde", b"short",
                                                                b"new"]  # fmt: skip
    assert known == [15, 5, 3] and len(stats) == 3


def test_a_reader_stats_its_files_in_the_first_epoch_only(tmp_path, monkeypatch):
    from ndd_triton.readers import _file

    for i in range(5):
        (tmp_path / "c").mkdir(exist_ok=True)
        (tmp_path / "c" / f"{i}.jpg").write_bytes(bytes([i]) * (10 + i))
    stats: list[str] = []
    real = _file.file_size
    monkeypatch.setattr(_file, "file_size", lambda p: stats.append(p) or real(p))
    reader = ndd.readers.File(file_root=str(tmp_path))
    for epoch in range(3):
        got = sorted(bytes(np.asarray(d)) for d, _ in reader.next_epoch())
        assert got == [bytes([i]) * (10 + i) for i in range(5)], f"epoch {epoch}"
    assert sorted(stats) == sorted(str(tmp_path / "c" / f"{i}.jpg") for i in range(5))
