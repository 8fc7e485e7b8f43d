"""`readers.Numpy`: `.npy` files as arrays, optionally a region of interest (DALI `readers.Numpy`).

Files are memory-mapped (unless `dont_use_mmap`), so reading a ROI only touches its pages. The
ROI is one box for every sample: absolute (`roi_start`, `roi_end` | `roi_shape`) or relative to
each sample's extent (`rel_roi_*`, rounded to the nearest index), over `roi_axes` (all axes
when empty). Outside the array, `out_of_bounds_policy` decides: `'error'` raises, `'pad'` fills
with `fill_value`, `'trim_to_shape'` clips the box to the array.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ndd_triton.core import source_tags
from ndd_triton.core.storage import BatchStorage
from ndd_triton.readers import _args
from ndd_triton.readers._base import Reader, pack_arrays
from ndd_triton.readers._file import matches

_POLICIES = ("error", "pad", "trim_to_shape")
_ROI_KEYS = ("roi_start", "roi_end", "roi_shape", "rel_roi_start", "rel_roi_end",
             "rel_roi_shape")  # fmt: skip


def _number_list(name: str, value: Any, kind: type) -> list[Any] | None:
    if value is None:
        return None
    items = list(value) if isinstance(value, list | tuple | np.ndarray) else [value]
    ok = (int, np.integer) if kind is int else (int, float, np.integer, np.floating)
    if not all(isinstance(v, ok) and not isinstance(v, bool) for v in items):
        wanted = "ints" if kind is int else "numbers"
        raise TypeError(f"Numpy: argument '{name}' expects a list of {wanted}; got {value!r:.60}")
    return [kind(v) for v in items]


class Roi:
    """The constant ROI arguments, resolved per sample shape."""

    def __init__(self, args: dict[str, Any]) -> None:
        self.values = {k: _number_list(k, args[k], int if not k.startswith("rel") else float)
                       for k in _ROI_KEYS}  # fmt: skip
        self.axes = _number_list("roi_axes", args["roi_axes"], int) or []
        for kind in ("", "rel_"):
            if self.values[f"{kind}roi_end"] is not None and \
                    self.values[f"{kind}roi_shape"] is not None:  # fmt: skip
                raise ValueError(f"Numpy: '{kind}roi_end' and '{kind}roi_shape' cannot be "
                                 "given together")
        for part in ("start", "end", "shape"):
            if self.values[f"roi_{part}"] is not None and \
                    self.values[f"rel_roi_{part}"] is not None:  # fmt: skip
                raise ValueError(f"Numpy: 'roi_{part}' and 'rel_roi_{part}' cannot be given "
                                 "together")
        given = {k: len(v) for k, v in self.values.items() if v is not None}
        if self.axes and any(n != len(self.axes) for n in given.values()):
            raise ValueError(f"Numpy: ROI arguments must have one value per roi_axes entry "
                             f"({len(self.axes)}); got lengths {given}")
        if len(set(given.values())) > 1:
            raise ValueError(f"Numpy: ROI arguments must have the same length; got {given}")
        self.active = bool(given)

    def box(self, shape: tuple[int, ...], path: str) -> tuple[list[int], list[int]]:
        """(start, end) per axis of `shape`; end may exceed the shape (checked by the caller)."""
        axes = self.axes or list(range(len(shape)))
        count = next(len(v) for v in self.values.values() if v is not None)
        if len(axes) != count or any(not -len(shape) <= a < len(shape) for a in axes):
            raise RuntimeError(f"Numpy: file {path!r} has shape {shape}; the ROI has {count} "
                               f"values for axes {axes}")
        start, end = [0] * len(shape), list(shape)
        for i, axis in enumerate(axes):
            extent = shape[axis]
            begin = self._get("start", i, extent, None) or 0
            start[axis] = begin
            stop = self._get("end", i, extent, None)
            size = self._get("shape", i, extent, None)
            end[axis] = stop if stop is not None else (begin + size if size is not None
                                                       else extent)  # fmt: skip
        return start, end

    def _get(self, part: str, i: int, extent: int, default: int | None) -> int | None:
        absolute, relative = self.values[f"roi_{part}"], self.values[f"rel_roi_{part}"]
        if absolute is not None:
            return int(absolute[i])
        if relative is not None:
            return int(np.floor(float(relative[i]) * extent + 0.5))
        return default


def read_roi(array: np.ndarray, roi: Roi, policy: str, fill: float, path: str) -> np.ndarray:
    """The ROI of `array` under `policy` (a copy; the source may be a memory map)."""
    if not roi.active:
        return np.ascontiguousarray(array)
    start, end = roi.box(array.shape, path)
    for axis, (a, b, n) in enumerate(zip(start, end, array.shape, strict=True)):
        if b < a:
            raise RuntimeError(f"Numpy: file {path!r} axis {axis}: the ROI end {b} is before "
                               f"its start {a}")
        if (a < 0 or b > n) and policy == "error":
            raise RuntimeError(f"Numpy: file {path!r} axis {axis}: the ROI [{a}, {b}) is out "
                               f"of bounds for extent {n}; use out_of_bounds_policy='pad' or "
                               "'trim_to_shape'")
    if policy == "trim_to_shape":
        start = [min(max(a, 0), n) for a, n in zip(start, array.shape, strict=True)]
        end = [min(max(b, s), n) for b, s, n in zip(end, start, array.shape, strict=True)]
        box = tuple(slice(a, b) for a, b in zip(start, end, strict=True))
        return np.ascontiguousarray(array[box])
    out = np.full([b - a for a, b in zip(start, end, strict=True)], fill, dtype=array.dtype)
    src = tuple(slice(max(a, 0), min(b, n))
                for a, b, n in zip(start, end, array.shape, strict=True))  # fmt: skip
    dst = tuple(slice(s.start - a, s.stop - a) for s, a in zip(src, start, strict=True))
    if all(s.stop > s.start for s in src):
        out[dst] = array[src]
    return out


class NumpySource:
    """Paths of `.npy` files; loads each (or its ROI) with NumPy."""

    layouts: tuple[str | None, ...] = (None,)

    def __init__(self, args: dict[str, Any]) -> None:
        self._args = args
        self._roi = Roi(args)
        self._paths: list[str] = []
        self._relative: list[str] = []

    def index(self) -> int:
        """Scan the dataset; RuntimeError when it cannot be read."""
        a = self._args
        root = a["file_root"]
        if a["files"] is not None:
            relative = list(a["files"])
        elif a["file_list"] is not None:
            root = root if root is not None else os.path.dirname(a["file_list"])
            try:
                with open(a["file_list"], encoding="utf-8") as f:
                    relative = [line.split()[0] for line in f if line.strip()]
            except OSError as e:
                raise RuntimeError(f"Numpy: cannot read file_list {a['file_list']!r}: "
                                   f"{e.strerror}") from e
        elif root is not None:
            if not os.path.isdir(root):
                raise RuntimeError(f"Numpy: file_root {root!r} does not exist or is not a "
                                   "directory")
            relative = sorted(os.path.relpath(os.path.join(folder, f), root)
                              for folder, _, files in os.walk(root, followlinks=True)
                              for f in files if matches(f, [a["file_filter"]], True))  # fmt: skip
        else:
            raise RuntimeError("Numpy: one of the arguments 'file_root', 'file_list' or 'files' "
                               "must be given")
        self._relative = relative
        self._paths = [os.path.join(root, p) if root else p for p in relative]
        return len(relative)

    def load(self, indices: np.ndarray) -> tuple[list[BatchStorage], list[str]]:
        """The arrays (or ROIs) of the samples `indices`."""
        arrays = []
        for i in indices.tolist():
            path = self._paths[i]
            try:
                array = np.load(path, mmap_mode=None if self._args["dont_use_mmap"] else "r",
                                allow_pickle=False)  # fmt: skip
            except (OSError, ValueError) as e:
                raise RuntimeError(f"Numpy: cannot read {path!r} as a .npy file: {e}") from e
            arrays.append(read_roi(array, self._roi, self._args["out_of_bounds_policy"],
                                   self._args["fill_value"], path))  # fmt: skip
        storage = pack_arrays(arrays, "Numpy")
        sources = [self._relative[i] for i in indices.tolist()]
        source_tags.tag_storage(storage, sources)
        return [storage], sources


class Numpy(Reader):
    """Reads `.npy` files (`file_root` + `file_filter`, `file_list` or `files`): one output."""

    _SPECIFIC = {"file_root": None, "file_list": None, "files": None, "file_filter": "*.npy",
                 "roi_start": None, "roi_end": None, "roi_shape": None, "rel_roi_start": None,
                 "rel_roi_end": None, "rel_roi_shape": None, "roi_axes": None,
                 "out_of_bounds_policy": "error", "fill_value": 0.0,
                 "cache_header_information": False, "use_o_direct": False,
                 "register_buffers": True}  # fmt: skip
    _DEVICES = ("cpu", "gpu")

    def _make_source(self, args: dict[str, Any]) -> NumpySource:
        for key in ("file_root", "file_list", "file_filter"):
            if args[key] is not None:
                args[key] = _args.string_list("Numpy", key, args[key])[0]
        if args["files"] is not None:
            args["files"] = _args.string_list("Numpy", "files", args["files"])
        if args["out_of_bounds_policy"] not in _POLICIES:
            raise ValueError(f"Numpy: argument 'out_of_bounds_policy' must be one of "
                             f"{', '.join(_POLICIES)}; got {args['out_of_bounds_policy']!r}")
        fill = args["fill_value"]
        if isinstance(fill, bool) or not isinstance(fill, int | float | np.number):
            raise TypeError(f"Numpy: argument 'fill_value' expects a number; got "
                            f"{type(fill).__name__}")
        return NumpySource(args)
