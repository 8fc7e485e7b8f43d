"""`readers.TFRecord`: `tf.train.Example` records parsed without TensorFlow (DALI `TFRecord`).

A TFRecord file is a sequence of records: `u64 length`, `u32 masked crc32c(length)`, `data`,
`u32 masked crc32c(data)`. Records are located from the index files (`index_path`: one
`<offset> <size>` line per record, as written by DALI's `tfrecord2idx`), or, as an extension,
by scanning the file when `index_path` is not given. Both checksums of every record are
verified (`google-crc32c`, hardware CRC: ~20 GB/s, so a 100 KB image costs ~5 us), unless
`check_crc=False` (an extension; DALI checks neither); an error names the record as
`file:offset`.
`data` is a protobuf `Example`, decoded here with a minimal wire-format parser. There is one
output per feature, in the order of the `features` dict (see `readers.tfrecord` for specs).
"""

from __future__ import annotations

import os
import struct
from typing import Any

import numpy as np

from ndd_triton.core import source_tags
from ndd_triton.core.storage import BatchStorage
from ndd_triton.readers import _args
from ndd_triton.readers._base import Reader, pack_arrays
from ndd_triton.readers.tfrecord import Feature, string


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _crc32c_table()


def crc32c_python(data: bytes) -> int:
    """CRC-32C (Castagnoli) in Python: the fallback without `google-crc32c` (~10 MB/s)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


try:  # a declared dependency; the fallback keeps a broken install working (slowly)
    from google_crc32c import value as crc32c
except ImportError:  # pragma: no cover
    crc32c = crc32c_python


def masked_crc32c(data: bytes) -> int:
    """TFRecord's masked CRC-32C (Castagnoli) of `data`."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# ---- protobuf wire format --------------------------------------------------------------------
def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of a message: ints, or bytes for LEN/fixed types."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            value, pos = buf[pos:pos + size], pos + size
        elif wire in (1, 5):
            width = 8 if wire == 1 else 4
            value, pos = buf[pos:pos + width], pos + width
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        out.append((number, wire, value))
    return out


def _values(kind: int, feature: bytes) -> list[Any]:
    """Values of a BytesList (1), FloatList (2) or Int64List (3), packed or not."""
    values: list[Any] = []
    for number, wire, value in _fields(feature):
        if number != 1:
            continue
        if kind == 1:
            values.append(bytes(value))
        elif kind == 2:
            values.extend(struct.unpack(f"<{len(value) // 4}f", value) if wire == 2
                          else struct.unpack("<f", value))  # fmt: skip
        elif wire == 2:
            pos = 0
            while pos < len(value):
                item, pos = _varint(value, pos)
                values.append(item)
        else:
            values.append(value)
    if kind == 3:
        values = [v - (1 << 64) if v >= 1 << 63 else v for v in values]
    return values


def parse_example(data: bytes) -> dict[str, tuple[int, list[Any]]]:
    """`{name: (kind, values)}` of a serialized `tf.train.Example` (kind 1 bytes/2 float/3 int)."""
    features: dict[str, tuple[int, list[Any]]] = {}
    for number, _, body in _fields(data):
        if number != 1:
            continue
        for entry_number, _, entry in _fields(body):
            if entry_number != 1:
                continue
            key, value = "", b""
            for part_number, _, part in _fields(entry):
                if part_number == 1:
                    key = bytes(part).decode()
                elif part_number == 2:
                    value = part
            kinds = [(n, v) for n, _, v in _fields(value) if n in (1, 2, 3)]
            features[key] = (kinds[0][0], _values(*kinds[0])) if kinds else (0, [])
    return features


_KIND = {"string": 1, "float32": 2, "int64": 3}


def feature_array(name: str, spec: Feature, found: tuple[int, list[Any]] | None,
                  where: str) -> np.ndarray:  # fmt: skip
    """The output array of feature `name` under `spec` (defaults for missing features)."""
    if found is not None and found[1] and found[0] != _KIND[spec.dtype]:
        raise RuntimeError(f"TFRecord: {where}: feature {name!r} holds "
                           f"{['', 'bytes', 'floats', 'ints'][found[0]]}, but its spec says "
                           f"{spec.dtype}")
    values = found[1] if found is not None else []
    if not values:
        if spec.default_value is None:
            if spec.fixed:
                raise RuntimeError(f"TFRecord: {where}: feature {name!r} is missing and its "
                                   "FixedLenFeature has no default_value")
            return np.zeros(0, spec.numpy_dtype)
        if spec.dtype == string:
            default = spec.default_value
            raw = default.encode() if isinstance(default, str) else bytes(default)
            return np.frombuffer(raw, np.uint8).copy()
        count = int(np.prod(spec.shape)) if spec.fixed else 1
        values = [spec.default_value] * count
    if spec.dtype == string:
        if len(values) > 1:
            raise RuntimeError(f"TFRecord: {where}: string feature {name!r} has {len(values)} "
                               "values; only one is supported")
        return np.frombuffer(values[0], np.uint8).copy()
    array = np.asarray(values, spec.numpy_dtype)
    if spec.fixed:
        if array.size != int(np.prod(spec.shape)):
            raise RuntimeError(f"TFRecord: {where}: feature {name!r} has {array.size} values; "
                               f"its FixedLenFeature shape {list(spec.shape)} needs "
                               f"{int(np.prod(spec.shape))}")
        array = array.reshape(spec.shape)
    return array


# ---- the reader ------------------------------------------------------------------------------
class TFRecordSource:
    """Record locations from index files (or a scan); parses the records of each batch."""

    def __init__(self, args: dict[str, Any]) -> None:
        self._args = args
        self._features: dict[str, Feature] = args["features"]
        self.layouts: tuple[str | None, ...] = (None,) * len(self._features)
        self._records: list[tuple[int, int, int]] = []  # (file index, offset, size)
        self._check_crc = bool(args["check_crc"])

    def index(self) -> int:
        """Locate every record; RuntimeError for unreadable or malformed index files."""
        records: list[tuple[int, int, int]] = []
        index_paths = self._args["index_path"]
        for file_index, path in enumerate(self._args["path"]):
            if index_paths is not None:
                records += [(file_index, o, s) for o, s in _read_index(index_paths[file_index])]
            else:
                records += [(file_index, o, s) for o, s in _scan(path)]
        self._records = records
        return len(records)

    def load(self, indices: np.ndarray) -> tuple[list[BatchStorage], list[str]]:
        """One storage per feature for the records `indices`."""
        columns: list[list[np.ndarray]] = [[] for _ in self._features]
        sources = []
        handles: dict[int, Any] = {}
        try:
            for i in indices.tolist():
                file_index, offset, size = self._records[i]
                path = self._args["path"][file_index]
                where = f"record {path}:{offset}"
                if file_index not in handles:
                    handles[file_index] = open(path, "rb")  # noqa: SIM115 (closed below)
                data = _read_record(handles[file_index], offset, size, where, self._check_crc)
                parsed = parse_example(data)
                for column, (name, spec) in zip(columns, self._features.items(), strict=True):
                    column.append(feature_array(name, spec, parsed.get(name), where))
                sources.append(f"{path}:{offset}")
        except OSError as e:
            raise RuntimeError(f"TFRecord: cannot read {e.filename!r}: {e.strerror}") from e
        finally:
            for handle in handles.values():
                handle.close()
        storages = [pack_arrays(column, "TFRecord") for column in columns]
        for storage in storages:
            source_tags.tag_storage(storage, sources)
        return storages, sources


def _read_record(handle: Any, offset: int, size: int, where: str, check_crc: bool) -> bytes:
    handle.seek(offset)
    header = handle.read(12)
    if len(header) < 12:
        raise RuntimeError(f"TFRecord: {where}: truncated record header")
    (length,) = struct.unpack("<Q", header[:8])
    if struct.unpack("<I", header[8:])[0] != masked_crc32c(header[:8]):
        raise RuntimeError(f"TFRecord: {where}: corrupted record (length checksum mismatch)")
    if size and length + 16 != size:
        raise RuntimeError(f"TFRecord: {where}: the index says {size} bytes but the record "
                           f"holds {length + 16}")
    record = handle.read(length + 4)
    if len(record) != length + 4:
        raise RuntimeError(f"TFRecord: {where}: truncated record data")
    data = record[:length]
    if check_crc and struct.unpack("<I", record[length:])[0] != masked_crc32c(data):
        raise RuntimeError(f"TFRecord: {where}: corrupted record (data checksum mismatch); "
                           "pass check_crc=False to read it anyway")
    return data  # type: ignore[no-any-return]


def _read_index(path: str) -> list[tuple[int, int]]:
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.split() for line in f if line.strip()]
        return [(int(parts[0]), int(parts[1])) for parts in lines]
    except OSError as e:
        raise RuntimeError(f"TFRecord: cannot read index file {path!r}: {e.strerror}") from e
    except (ValueError, IndexError):
        raise RuntimeError(f"TFRecord: index file {path!r}: expected '<offset> <size>' "
                           "lines") from None


def _scan(path: str) -> list[tuple[int, int]]:
    records = []
    try:
        total = os.path.getsize(path)
        with open(path, "rb") as f:
            offset = 0
            while offset < total:
                f.seek(offset)
                header = f.read(8)
                if len(header) < 8:
                    raise RuntimeError(f"TFRecord: {path!r}: truncated record at offset {offset}")
                size = struct.unpack("<Q", header)[0] + 16
                records.append((offset, size))
                offset += size
    except OSError as e:
        raise RuntimeError(f"TFRecord: cannot read {path!r}: {e.strerror}") from e
    return records


class TFRecord(Reader):
    """Reads `tf.train.Example` TFRecord files: one output per entry of `features`."""

    _SPECIFIC = {"path": None, "index_path": None, "features": None, "use_o_direct": False,
                 "check_crc": True}  # fmt: skip

    def _make_source(self, args: dict[str, Any]) -> TFRecordSource:
        for key in ("path", "features"):
            if args[key] is None:
                raise TypeError(f"TFRecord: missing required argument '{key}'")
        args["check_crc"] = _args.check_bool("TFRecord", "check_crc", args["check_crc"])
        args["path"] = _args.string_list("TFRecord", "path", args["path"])
        if args["index_path"] is not None:
            args["index_path"] = _args.string_list("TFRecord", "index_path", args["index_path"])
            if len(args["index_path"]) != len(args["path"]):
                raise ValueError(f"TFRecord: 'index_path' must have one entry per path: got "
                                 f"{len(args['index_path'])} for {len(args['path'])} paths")
        features = args["features"]
        if not isinstance(features, dict) or not features or not all(
                isinstance(k, str) and isinstance(v, Feature) for k, v in features.items()):
            raise TypeError("TFRecord: argument 'features' expects a non-empty dict of name -> "
                            "tfrecord.FixedLenFeature/VarLenFeature")
        return TFRecordSource(args)
