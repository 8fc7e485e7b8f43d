"""`readers.NemoAsr`: NeMo ASR manifests -> decoded audio, sample rate, text, index (DALI
`readers.NemoAsr`, core.md §14.4).

A manifest is JSON lines with `audio_filepath` (relative paths are relative to the manifest's
folder), `duration` and `text`. Entries outside `[min_duration, max_duration]` (0: no limit)
are dropped when the dataset is indexed. The prefetch thread reads the files' bytes; each
handed-out batch is decoded by `decoders.audio` (on the thread pool, like any op), so a
corrupt file fails that batch where its audio is read, naming the file, and the reader
moves on: later batches are unaffected. Outputs: audio (`(n,)` with `downmix`, else
`(n, channels)`), then the rate (f32 0-D) if `read_sample_rate`, the UTF-8 text (u8 1-D) if
`read_text`, the manifest index (i64 `(1,)`) if `read_idxs`.
"""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import torch

from ndd_triton.core import dtype as dt
from ndd_triton.core import source_tags
from ndd_triton.core.storage import BatchStorage
from ndd_triton.ops import calls, decoders_audio
from ndd_triton.readers import _args
from ndd_triton.readers._base import Reader, pack_arrays
from ndd_triton.readers._file import FileSizes, read_bytes_batch, scalar_batch


class NemoAsrSource:
    """Index of the manifest entries kept after duration filtering."""

    layouts: tuple[str | None, ...] = (None, None, None)

    def __init__(self, args: dict[str, Any]) -> None:
        self._args = args
        self._paths: list[str] = []
        self._texts: list[bytes] = []
        self._ids = np.zeros(0, np.int64)
        self._sizes = FileSizes(0)

    def index(self) -> int:
        """Read every manifest; RuntimeError names the manifest and line of a bad entry."""
        low, high = self._args["min_duration"], self._args["max_duration"]
        paths, texts, ids = [], [], []
        number = 0
        for manifest in self._args["manifest_filepaths"]:
            for entry in _entries(manifest):
                duration = float(entry.get("duration", 0.0))
                keep = duration >= low and (high <= 0 or duration <= high)
                if keep:
                    path = str(entry["audio_filepath"])
                    paths.append(path if os.path.isabs(path) else
                                 os.path.join(os.path.dirname(manifest), path))  # fmt: skip
                    texts.append(str(entry.get("text", "")).encode("utf-8"))
                    ids.append(number)
                number += 1
        self._paths, self._texts = paths, texts
        self._ids = np.asarray(ids, np.int64)
        self._sizes = FileSizes(len(paths))
        return len(paths)

    def load(self, indices: np.ndarray) -> tuple[list[BatchStorage], list[str]]:
        """File bytes (tagged with their paths), texts and manifest indices of `indices`."""
        chosen = indices.tolist()
        known = self._sizes.get(indices)
        sources = [self._paths[i] for i in chosen]
        data = read_bytes_batch(sources, known)
        self._sizes.set(indices, known)
        source_tags.tag_storage(data, sources)
        text = pack_arrays([np.frombuffer(self._texts[i], np.uint8) for i in chosen], "NemoAsr")
        return [data, text, scalar_batch(self._ids[indices], torch.int64)], sources


def _entries(manifest: str) -> list[dict[str, Any]]:
    try:
        with open(manifest, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise RuntimeError(f"NemoAsr: cannot read manifest {manifest!r}: {e.strerror}") from e
    entries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if not isinstance(entry, dict) or "audio_filepath" not in entry:
                raise ValueError("no 'audio_filepath'")
        except ValueError as e:
            raise RuntimeError(
                f"NemoAsr: manifest {manifest!r} line {number}: expected a JSON "
                f"object with 'audio_filepath': {e}"
            ) from None
        entries.append(entry)
    return entries


class NemoAsr(Reader):
    """Reads NeMo ASR manifests; decodes the audio with `decoders.audio` (see the module)."""

    _SPECIFIC = {"manifest_filepaths": None, "sample_rate": -1.0, "quality": 50.0,
                 "downmix": True, "dtype": dt.float32, "min_duration": 0.0,
                 "max_duration": 0.0, "read_sample_rate": True, "read_text": True,
                 "read_idxs": False}  # fmt: skip

    def _make_source(self, args: dict[str, Any]) -> NemoAsrSource:
        manifests = args["manifest_filepaths"]
        if manifests is None:
            raise TypeError("NemoAsr: missing required argument 'manifest_filepaths'")
        if isinstance(manifests, str | os.PathLike):
            manifests = [manifests]
        args["manifest_filepaths"] = _args.string_list(
            "NemoAsr", "manifest_filepaths", [os.fspath(m) for m in manifests]
        )
        for key in ("downmix", "read_sample_rate", "read_text", "read_idxs"):
            args[key] = _args.check_bool("NemoAsr", key, args[key])
        for key in ("sample_rate", "quality", "min_duration", "max_duration"):
            if isinstance(args[key], bool) or not isinstance(args[key], int | float):
                raise TypeError(
                    f"NemoAsr: argument '{key}' expects a number; got {type(args[key]).__name__}"
                )
            args[key] = float(args[key])
        if not 0 <= args["quality"] <= 100:
            raise ValueError(
                f"NemoAsr: argument 'quality' must be in [0, 100]; got {args['quality']}"
            )
        args["dtype"] = dt.to_dtype_arg(args["dtype"], "NemoAsr: argument 'dtype'")
        if args["dtype"] not in (dt.float32, dt.int16, dt.int32):
            raise ValueError(
                f"NemoAsr: argument 'dtype' must be float32, int16 or int32; got {args['dtype']}"
            )
        return NemoAsrSource(args)

    def _wrap(self, item: Any, as_batch: bool) -> tuple[Any, ...]:
        encoded, text, idx = super()._wrap(item, as_batch)
        a = self._args
        given = {
            "downmix": a["downmix"],
            "dtype": a["dtype"],
            "quality": a["quality"],
            "sample_rate": a["sample_rate"],
        }
        schema = decoders_audio.schema
        audio, rate = calls.call_op(schema, [encoded], [given.get(arg.name) for arg in schema.args],
                                    None, None)  # fmt: skip
        out = [audio]
        if a["read_sample_rate"]:
            out.append(rate)
        if a["read_text"]:
            out.append(text)
        if a["read_idxs"]:
            out.append(idx)
        return tuple(out)
