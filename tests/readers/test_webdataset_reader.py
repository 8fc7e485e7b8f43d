"""readers.Webdataset: tar shards written by the test with tarfile (core.md §14.4)."""

from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest

import ndd_triton as ndd


def write_tar(path, members):
    """A tar with `members` [(name, bytes)] in order."""
    with tarfile.open(path, "w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return str(path)


@pytest.fixture
def shards(tmp_path):
    first = write_tar(tmp_path / "a.tar", [
        ("s0.jpg", b"jpeg-0"), ("s0.cls", np.int32(3).tobytes()),
        ("s1.png", b"png-1"), ("s1.cls", np.int32(4).tobytes()),
        ("dir/s2.JPG", b"JPEG-2"), ("dir/s2.cls", np.int32(5).tobytes()),
    ])  # fmt: skip
    second = write_tar(tmp_path / "b.tar", [
        ("t0.jpg", b"jpeg-t0"),  # no .cls component
        ("t1.jpg", b"jpeg-t1"), ("t1.cls", np.int32(7).tobytes()), ("t1.extra.txt", b"x"),
    ])  # fmt: skip
    return [first, second]


def read_epoch(reader):
    return [tuple(np.asarray(t) for t in sample) for sample in reader.next_epoch()]


def test_components_alternatives_and_dtypes(shards):
    reader = ndd.readers.Webdataset(paths=shards, ext=["jpg;png", "cls"],
                                    dtypes=[ndd.uint8, ndd.int32])  # fmt: skip
    samples = read_epoch(reader)
    images = [bytes(s[0]) for s in samples]
    labels = [s[1].tolist() for s in samples]
    assert images == [b"jpeg-0", b"png-1", b"", b"jpeg-t0", b"jpeg-t1"]  # JPG != jpg
    assert labels == [[3], [4], [5], [], [7]]  # missing components are empty by default
    assert samples[0][1].dtype == np.int32


def test_case_insensitive_extensions(shards):
    reader = ndd.readers.Webdataset(paths=shards[0], ext="jpg",
                                    case_sensitive_extensions=False)  # fmt: skip
    assert [bytes(s[0]) for s in read_epoch(reader)] == [b"jpeg-0", b"", b"JPEG-2"]


def test_missing_component_behaviors(shards):
    skip = ndd.readers.Webdataset(paths=shards, ext=["jpg", "cls"],
                                  missing_component_behavior="skip")  # fmt: skip
    assert [bytes(s[0]) for s in read_epoch(skip)] == [b"jpeg-0", b"jpeg-t1"]
    strict = ndd.readers.Webdataset(paths=shards, ext=["jpg", "cls"],
                                    missing_component_behavior="error")  # fmt: skip
    with pytest.raises(RuntimeError, match=r"sample 's1' in .*a\.tar' has no component for "
                                           r"extension\(s\) \['jpg'\]; it has \['cls', 'png'\]"):
        strict.next_epoch()


def test_batches_and_multi_dot_extensions(shards):
    reader = ndd.readers.Webdataset(paths=[shards[1]], ext=["extra.txt", "jpg"])
    extra, jpg = next(iter(reader.next_epoch(batch_size=2)))
    assert extra.shape == [(0,), (1,)]
    assert jpg.dtype == ndd.uint8
    assert ndd.readers.source_info(jpg.select(1)).endswith("b.tar:t1")


def test_errors(shards, tmp_path):
    with pytest.raises(TypeError, match="missing required argument 'ext'"):
        ndd.readers.Webdataset(paths=shards)
    with pytest.raises(ValueError, match="'missing_component_behavior' must be one of"):
        ndd.readers.Webdataset(paths=shards, ext="jpg", missing_component_behavior="ignore")
    with pytest.raises(ValueError, match="'dtypes' must have one entry per 'ext' entry: got 1"):
        ndd.readers.Webdataset(paths=shards, ext=["jpg", "cls"], dtypes=[ndd.uint8])
    with pytest.raises(TypeError, match="'dtypes' expects a dtype"):
        ndd.readers.Webdataset(paths=shards, ext="jpg", dtypes=[object()])
    with pytest.raises(ValueError, match="'index_paths' must have one entry per path"):
        ndd.readers.Webdataset(paths=shards, ext="jpg", index_paths=["i"])
    with pytest.raises(RuntimeError, match=r"index file .* does not exist"):
        ndd.readers.Webdataset(paths=shards[:1], ext="jpg",
                               index_paths=[str(tmp_path / "none.idx")]).next_epoch()
    (tmp_path / "bad.tar").write_bytes(b"not a tar archive at all" * 40)
    with pytest.raises(RuntimeError, match="cannot read tar file"):
        ndd.readers.Webdataset(paths=str(tmp_path / "bad.tar"), ext="jpg").next_epoch()
    odd = ndd.readers.Webdataset(paths=shards[0], ext="jpg", dtypes=ndd.int32)
    with pytest.raises(RuntimeError, match="a component of 6 bytes cannot be read as i32"):
        next(iter(odd.next_epoch()))


def test_decoder_errors_name_the_sample(tmp_path):
    """A damaged image from a shard fails in the decoder naming its tar member."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (9, 7), (10, 200, 30)).save(buf, "JPEG")
    good = buf.getvalue()
    shard = write_tar(tmp_path / "d.tar", [("k0.jpg", good), ("k1.jpg", good[:len(good) // 2]),
                                           ("k2.jpg", good), ("k3.jpg", b"junk" * 8)])
    reader = ndd.readers.Webdataset(paths=shard, ext="jpg")
    batches = [b for (b,) in reader.next_epoch(batch_size=2)]
    with pytest.raises(RuntimeError, match=r"decoders.image: sample 1 from '.*d\.tar:k1': "
                                           r"corrupt image header"):
        ndd.decoders.image(batches[0]).evaluate()
    with pytest.raises(RuntimeError, match=r"decoders.image: sample 1 from '.*d\.tar:k3': "
                                           r"unrecognised or corrupt image data"):
        ndd.decoders.image(batches[1]).evaluate()
    assert ndd.decoders.image(batches[1].select(0)).shape == (7, 9, 3)
