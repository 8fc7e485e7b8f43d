"""readers.TFRecord: records written by a tiny writer in the test (no TensorFlow)."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

import ndd_triton as ndd
from ndd_triton.readers import tfrecord as tfrec


# ---- an independent writer: bitwise CRC-32C and hand-rolled protobuf ---------------------------
def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 * (crc & 1))
    return crc ^ 0xFFFFFFFF


def masked(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, payload: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def feature(value) -> bytes:
    if isinstance(value, bytes):
        return field(1, field(1, value))
    if isinstance(value, tuple) and value and value[0] == "unpacked-int":
        return field(3, b"".join(varint(1 << 3) + varint(v) for v in value[1:]))
    if all(isinstance(v, float) for v in value):
        return field(2, field(1, struct.pack(f"<{len(value)}f", *value)))
    return field(3, field(1, b"".join(varint(v) for v in value)))


def example(features: dict) -> bytes:
    entries = b"".join(field(1, field(1, k.encode()) + field(2, feature(v)))
                       for k, v in features.items())
    return field(1, entries)


def write_tfrecord(path, examples) -> list[tuple[int, int]]:
    """Write records; returns (offset, size) per record."""
    index = []
    with open(path, "wb") as f:
        for ex in examples:
            data = example(ex)
            header = struct.pack("<Q", len(data))
            record = header + struct.pack("<I", masked(header)) + data + \
                struct.pack("<I", masked(data))
            index.append((f.tell(), len(record)))
            f.write(record)
    return index


@pytest.fixture
def records(tmp_path):
    examples = [
        {"image": b"jpeg-0", "label": [3], "boxes": [0.5, 0.25, 1.0, 0.75], "ids": [-2, 7]},
        {"image": b"jpeg-one", "label": ("unpacked-int", 4), "boxes": [0.125]},
        {"image": b"", "label": [5], "boxes": [], "ids": [2**40]},
    ]
    path = tmp_path / "data.tfrecord"
    index = write_tfrecord(path, examples)
    index_path = tmp_path / "data.idx"
    index_path.write_text("".join(f"{o} {s}\n" for o, s in index))
    return str(path), str(index_path)


FEATURES = {"image": tfrec.FixedLenFeature([], tfrec.string, ""),
            "label": tfrec.FixedLenFeature([1], tfrec.int64, -1),
            "boxes": tfrec.VarLenFeature(tfrec.float32, 0.0),
            "ids": tfrec.VarLenFeature(tfrec.int64)}  # fmt: skip


def read_epoch(reader):
    return [tuple(np.asarray(t) for t in sample) for sample in reader.next_epoch()]


@pytest.mark.parametrize("use_index", [True, False])
def test_features(records, use_index):
    path, index = records
    kwargs = {"index_path": [index]} if use_index else {}
    samples = read_epoch(ndd.readers.TFRecord(path=[path], features=FEATURES, **kwargs))
    assert [bytes(s[0]) for s in samples] == [b"jpeg-0", b"jpeg-one", b""]
    assert [s[1].tolist() for s in samples] == [[3], [4], [5]]
    assert samples[0][1].dtype == np.int64
    assert samples[0][2].dtype == np.float32
    assert [s[2].tolist() for s in samples] == [[0.5, 0.25, 1.0, 0.75], [0.125], [0.0]]
    assert [s[3].tolist() for s in samples] == [[-2, 7], [], [2**40]]


def test_batches_and_fixed_shapes(records):
    path, index = records
    features = {"boxes": tfrec.FixedLenFeature([2, 2], tfrec.float32)}
    reader = ndd.readers.TFRecord(path=path, index_path=index, features=features)
    iterator = reader.next_epoch(batch_size=1)
    (first,) = next(iterator)
    assert first.shape == [(2, 2)]
    with pytest.raises(RuntimeError, match=r"feature 'boxes' has 1 values; its FixedLenFeature "
                                           r"shape \[2, 2\] needs 4"):
        next(iterator)


def test_record_errors(records, tmp_path):
    path, index = records
    no_default = {"ids": tfrec.FixedLenFeature([1], tfrec.int64)}
    reader = ndd.readers.TFRecord(path=path, index_path=index, features=no_default)
    iterator = reader.next_epoch()
    with pytest.raises(RuntimeError, match="has 2 values"):
        next(iterator)
    wrong_kind = {"image": tfrec.VarLenFeature(tfrec.int64)}
    with pytest.raises(RuntimeError, match="feature 'image' holds bytes, but its spec says int64"):
        next(iter(ndd.readers.TFRecord(path=path, features=wrong_kind).next_epoch()))
    missing = {"nothing": tfrec.FixedLenFeature([], tfrec.int64)}
    with pytest.raises(RuntimeError, match="feature 'nothing' is missing and its "
                                           "FixedLenFeature has no default_value"):
        next(iter(ndd.readers.TFRecord(path=path, features=missing).next_epoch()))
    corrupt = tmp_path / "corrupt.tfrecord"
    raw = bytearray(Path(path).read_bytes())
    raw[9] ^= 0xFF
    corrupt.write_bytes(bytes(raw))
    reader = ndd.readers.TFRecord(path=str(corrupt), index_path=index, features=FEATURES)
    with pytest.raises(RuntimeError, match="length checksum mismatch"):
        next(iter(reader.next_epoch()))
    bad_index = tmp_path / "bad.idx"
    bad_index.write_text("zero one\n")
    with pytest.raises(RuntimeError, match="expected '<offset> <size>' lines"):
        ndd.readers.TFRecord(path=path, index_path=str(bad_index), features=FEATURES).next_epoch()
    with pytest.raises(RuntimeError, match="cannot read index file"):
        ndd.readers.TFRecord(path=path, index_path=str(tmp_path / "no.idx"),
                             features=FEATURES).next_epoch()


@pytest.mark.parametrize("use_index", [True, False])
def test_a_corrupt_payload_fails_naming_file_and_offset(records, tmp_path, use_index):
    path, index = records
    second = int(Path(index).read_text().splitlines()[1].split()[0])
    raw = bytearray(Path(path).read_bytes())
    raw[raw.index(b"jpeg-one") + 5] ^= 0x01  # one bit of the second record's image: "jpeg-nne"
    corrupt = tmp_path / "flipped.tfrecord"
    corrupt.write_bytes(bytes(raw))
    kwargs = {"index_path": index} if use_index else {}
    reader = ndd.readers.TFRecord(path=str(corrupt), features=FEATURES, **kwargs)
    iterator = reader.next_epoch()
    assert bytes(np.asarray(next(iterator)[0])) == b"jpeg-0"
    with pytest.raises(RuntimeError, match=rf"TFRecord: record .*flipped\.tfrecord:{second}: "
                                           r"corrupted record \(data checksum mismatch\); pass "
                                           r"check_crc=False to read it anyway"):  # fmt: skip
        next(iterator)
    unchecked = ndd.readers.TFRecord(path=str(corrupt), features=FEATURES, check_crc=False,
                                     **kwargs)  # fmt: skip
    assert [bytes(s[0]) for s in read_epoch(unchecked)] == [b"jpeg-0", b"jpeg-nne", b""]


def test_truncated_payload_and_trailer(records, tmp_path):
    path, index = records
    raw = Path(path).read_bytes()
    cut = tmp_path / "cut.tfrecord"
    cut.write_bytes(raw[:-2])  # the last record loses half its data checksum
    reader = ndd.readers.TFRecord(path=str(cut), index_path=index, features=FEATURES)
    with pytest.raises(RuntimeError, match=r"cut\.tfrecord:\d+: truncated record data"):
        read_epoch(reader)


def test_check_crc_must_be_a_bool(records):
    with pytest.raises(TypeError, match="TFRecord: argument 'check_crc' expects a bool; got str"):
        ndd.readers.TFRecord(path=records[0], features=FEATURES, check_crc="no")


def test_crc32c_matches_the_reference_and_the_fallback():
    from ndd_triton.readers import _tfrecord

    for data in (b"", b"123456789", bytes(range(256)) * 3):
        assert _tfrecord.crc32c(data) == _tfrecord.crc32c_python(data) == crc32c(data)
    assert _tfrecord.crc32c(b"123456789") == 0xE3069283  # the standard check value


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: tfrec.FixedLenFeature([], "int32"), TypeError,
     "dtype must be tfrecord.int64, tfrecord.float32 or tfrecord.string; got 'int32'"),
    (lambda: tfrec.FixedLenFeature([2], tfrec.string), ValueError,
     r"a string feature holds one value \(shape \[\] or \[1\]\); got shape \[2\]"),
    (lambda: tfrec.FixedLenFeature("x", tfrec.int64), TypeError,
     "shape must be a list of non-negative ints"),
    (lambda: ndd.readers.TFRecord(path="a"), TypeError, "missing required argument 'features'"),
    (lambda: ndd.readers.TFRecord(path="a", features={"x": 1}), TypeError,
     "'features' expects a non-empty dict"),
    (lambda: ndd.readers.TFRecord(path=["a", "b"], index_path=["i"], features=FEATURES),
     ValueError, "'index_path' must have one entry per path: got 1 for 2 paths"),
])  # fmt: skip
def test_spec_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_decoder_errors_name_the_record(tmp_path):
    """A damaged image feature fails in the decoder naming its file and record offset."""
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (9, 7), (10, 200, 30)).save(buf, "PNG")
    good = buf.getvalue()
    path = tmp_path / "img.tfrecord"
    index = write_tfrecord(path, [{"image": good}, {"image": good[:-30]}])
    reader = ndd.readers.TFRecord(path=str(path),
                                  features={"image": tfrec.FixedLenFeature((), tfrec.string, "")})
    (batch,) = next(iter(reader.next_epoch(batch_size=2)))
    with pytest.raises(RuntimeError, match=rf"decoders.image: sample 1 from '.*img\.tfrecord:"
                                           rf"{index[1][0]}': cannot decode the PNG image"):
        ndd.decoders.image(batch).evaluate()
    assert ndd.decoders.image(batch.select(0)).shape == (7, 9, 3)
