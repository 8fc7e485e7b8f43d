"""`readers.Webdataset`: samples grouped from tar shards by key (DALI `readers.Webdataset`).

A sample is a run of consecutive tar members sharing a key (the member path up to the first
`.` of its file name); the rest of the name is the component's extension. Each `ext` entry is
one output, `;` separating alternatives (the first one present wins). Component bytes are
reinterpreted as the output's dtype (u8 by default), 1-D.

Index files (`index_paths`) are checked to exist but the tar headers are scanned in any case
(reading only headers, not payloads), so no warning is printed when they are absent.
"""

from __future__ import annotations

import os
import tarfile
from typing import Any

import numpy as np

from ndd_triton.core import source_tags
from ndd_triton.core.dtype import DType, to_dtype_arg
from ndd_triton.core.storage import BatchStorage
from ndd_triton.readers import _args
from ndd_triton.readers._base import Reader, pack_arrays

_BEHAVIORS = {"": "empty", "empty": "empty", "skip": "skip", "error": "error"}

# One component: (tar index, data offset, size); a sample: its key and one component per output.
Component = tuple[int, int, int] | None


class WebdatasetSource:
    """Tar member index grouped into samples."""

    def __init__(self, args: dict[str, Any], outputs: list[list[str]], dtypes: list[DType]) -> None:
        self._args = args
        self._outputs = outputs
        self._dtypes = dtypes
        self.layouts: tuple[str | None, ...] = (None,) * len(outputs)
        self._samples: list[tuple[str, list[Component]]] = []
        self._paths: list[str] = args["paths"]

    def _fold(self, ext: str) -> str:
        return ext if self._args["case_sensitive_extensions"] else ext.lower()

    def index(self) -> int:
        """Scan the tar headers; RuntimeError for unreadable shards or missing components."""
        for path in self._args["index_paths"] or []:
            if not os.path.isfile(path):
                raise RuntimeError(f"Webdataset: index file {path!r} does not exist")
        samples: list[tuple[str, list[Component]]] = []
        behavior = _BEHAVIORS[self._args["missing_component_behavior"]]
        for tar_index, path in enumerate(self._paths):
            for key, members in _group_members(tar_index, path):
                found = {self._fold(ext): where for ext, where in members.items()}
                components = [next((found[self._fold(alt)] for alt in alts
                                    if self._fold(alt) in found), None)
                              for alts in self._outputs]  # fmt: skip
                if None in components:
                    if behavior == "skip":
                        continue
                    if behavior == "error":
                        missing = [";".join(a) for a, c
                                   in zip(self._outputs, components, strict=True)
                                   if c is None]  # fmt: skip
                        raise RuntimeError(f"Webdataset: sample {key!r} in {path!r} has no "
                                           f"component for extension(s) {missing}; it has "
                                           f"{sorted(members)}")
                samples.append((f"{path}:{key}", components))
        self._samples = samples
        return len(samples)

    def load(self, indices: np.ndarray) -> tuple[list[BatchStorage], list[str]]:
        """Component bytes (as each output's dtype) of the samples `indices`."""
        chosen = [self._samples[i] for i in indices.tolist()]
        handles: dict[int, Any] = {}
        try:
            columns: list[list[np.ndarray]] = [[] for _ in self._outputs]
            for source, components in chosen:
                for column, component, dtype in zip(columns, components, self._dtypes, strict=True):
                    column.append(self._read(handles, source, component, dtype))
        finally:
            for handle in handles.values():
                handle.close()
        storages = [pack_arrays(column, "Webdataset") for column in columns]
        sources = [source for source, _ in chosen]
        for storage in storages:
            source_tags.tag_storage(storage, sources)
        return storages, sources

    def _read(self, handles: dict[int, Any], source: str, component: Component,
              dtype: DType) -> np.ndarray:  # fmt: skip
        np_dtype = dtype.numpy_dtype
        if component is None:
            return np.zeros(0, np_dtype)
        tar_index, offset, size = component
        if tar_index not in handles:
            handles[tar_index] = open(self._paths[tar_index], "rb")  # noqa: SIM115 (closed above)
        handle = handles[tar_index]
        handle.seek(offset)
        raw = handle.read(size)
        if size % np_dtype.itemsize:
            raise RuntimeError(f"Webdataset: sample {source!r}: a component of {size} bytes "
                               f"cannot be read as {dtype} ({np_dtype.itemsize} bytes per value)")
        return np.frombuffer(raw, dtype=np_dtype).copy()


def _group_members(tar_index: int, path: str) -> list[tuple[str, dict[str, tuple[int, int, int]]]]:
    """Consecutive regular members grouped by key: [(key, {ext: (tar, offset, size)})]."""
    try:
        with tarfile.open(path, "r:") as tar:
            members = [m for m in tar.getmembers() if m.isfile()]
    except (OSError, tarfile.TarError) as e:
        raise RuntimeError(f"Webdataset: cannot read tar file {path!r}: {e}") from e
    groups: list[tuple[str, dict[str, tuple[int, int, int]]]] = []
    for member in members:
        folder, name = os.path.split(member.name)
        if "." not in name:
            continue
        stem, ext = name.split(".", 1)
        key = os.path.join(folder, stem) if folder else stem
        if not groups or groups[-1][0] != key:
            groups.append((key, {}))
        groups[-1][1][ext] = (tar_index, member.offset_data, member.size)
    return groups


class Webdataset(Reader):
    """Reads webdataset tar shards: one output per `ext` entry (see the module docstring)."""

    _SPECIFIC = {"paths": None, "ext": None, "index_paths": None, "dtypes": None,
                 "case_sensitive_extensions": True, "missing_component_behavior": ""}  # fmt: skip

    def _make_source(self, args: dict[str, Any]) -> WebdatasetSource:
        for key in ("paths", "ext"):
            if args[key] is None:
                raise TypeError(f"Webdataset: missing required argument '{key}'")
            args[key] = _args.string_list("Webdataset", key, args[key])
        if args["index_paths"] is not None:
            args["index_paths"] = _args.string_list("Webdataset", "index_paths",
                                                    args["index_paths"])  # fmt: skip
            if len(args["index_paths"]) != len(args["paths"]):
                raise ValueError(f"Webdataset: 'index_paths' must have one entry per path: got "
                                 f"{len(args['index_paths'])} for {len(args['paths'])} paths")
        args["case_sensitive_extensions"] = _args.check_bool(
            "Webdataset", "case_sensitive_extensions", args["case_sensitive_extensions"])
        if args["missing_component_behavior"] not in _BEHAVIORS:
            raise ValueError(f"Webdataset: argument 'missing_component_behavior' must be one of "
                             f"'skip', 'error', 'empty' (or ''); got "
                             f"{args['missing_component_behavior']!r}")
        outputs = [entry.split(";") for entry in args["ext"]]
        dtypes = args["dtypes"]
        if dtypes is None:
            dtypes = ["uint8"] * len(outputs)
        elif not isinstance(dtypes, list | tuple):
            dtypes = [dtypes] * len(outputs)
        if len(dtypes) != len(outputs):
            raise ValueError(f"Webdataset: 'dtypes' must have one entry per 'ext' entry: got "
                             f"{len(dtypes)} for {len(outputs)}")
        parsed = [to_dtype_arg(d, "Webdataset: argument 'dtypes'") for d in dtypes]
        return WebdatasetSource(args, outputs, parsed)
