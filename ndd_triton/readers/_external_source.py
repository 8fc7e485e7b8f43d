"""`ExternalSource`: feed data from Python callables or iterables (core.md §16).

Each call polls the source once: `source()` for a callable, `next(...)` for an iterable (a
generator function is called once per pass to get a fresh generator). Values become a `Batch`
when the source returns one, else a `Tensor` (or a `Batch` of `batch_size` copies).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

import numpy as np

from ndd_triton.core.batch import Batch
from ndd_triton.core.construct import as_batch, as_tensor
from ndd_triton.core.device import device as to_device
from ndd_triton.core.tensor import Tensor
from ndd_triton.runtime.compiled import DEFAULT_DEPTH, Session

_CYCLE_MODES = {None: "no", False: "no", "no": "no", True: "quiet", "quiet": "quiet",
                "raise": "raise"}  # fmt: skip


class ExternalSource:
    """Polls `source` once per call; `num_outputs` > 1 expects a tuple of that many values."""

    def __init__(self, source: Any, num_outputs: int = 1, *, cycle: Any = None,
                 device: Any = "cpu", layout: Any = None, dtype: Any = None) -> None:  # fmt: skip
        if isinstance(num_outputs, bool) or not isinstance(num_outputs, int | np.integer):
            raise TypeError(f"ExternalSource: num_outputs expects an int; got "
                            f"{type(num_outputs).__name__}")
        if num_outputs < 1:
            raise ValueError(f"ExternalSource: num_outputs must be >= 1; got {num_outputs}")
        self._factory = source if inspect.isgeneratorfunction(source) else None
        iterable = self._factory is not None or (
            not callable(source) and hasattr(source, "__iter__"))  # fmt: skip
        if not iterable and not callable(source):
            raise TypeError(f"ExternalSource: source must be a callable or an iterable; got "
                            f"{type(source).__name__}")
        if not iterable and cycle is not None:
            raise ValueError("The argument cycle can only be specified if source is iterable.")
        try:
            self._cycle = _CYCLE_MODES[cycle]
        except (KeyError, TypeError):
            raise ValueError(f"ExternalSource: invalid cycle {cycle!r}; expected one of None, "
                             "False, 'no', True, 'quiet', 'raise'") from None
        self._source = source
        self._iterable = iterable
        self._iterator: Iterator[Any] | None = None
        self._num_outputs = int(num_outputs)
        self._device = to_device(device)
        self._layouts = _per_output("layout", layout, self._num_outputs)
        self._dtypes = _per_output("dtype", dtype, self._num_outputs)

    def _fresh_iterator(self) -> Iterator[Any]:
        return iter(self._factory() if self._factory is not None else self._source)

    def _poll(self) -> Any:
        if not self._iterable:
            return self._source()
        if self._iterator is None:
            self._iterator = self._fresh_iterator()
        try:
            return next(self._iterator)
        except StopIteration:
            if self._cycle == "quiet":
                self._iterator = self._fresh_iterator()
                return next(self._iterator)
            self._iterator = None if self._cycle == "raise" else self._iterator
            raise

    def __call__(self, *, batch_size: int | None = None) -> Any:
        """The next value(s) from the source as Tensor/Batch (a tuple for num_outputs > 1)."""
        if batch_size is not None:
            _check_batch_size(batch_size)
        value = self._poll()
        if self._num_outputs == 1:
            return self._convert(value, 0, batch_size)
        if not isinstance(value, tuple | list) or len(value) != self._num_outputs:
            raise ValueError(f"Expected {self._num_outputs} outputs from the source")
        return tuple(self._convert(v, i, batch_size) for i, v in enumerate(value))

    def _convert(self, value: Any, index: int, batch_size: int | None) -> Tensor | Batch:
        layout, dtype = self._layouts[index], self._dtypes[index]
        if isinstance(value, Batch):
            if batch_size is not None and value.batch_size != batch_size:
                raise ValueError(f"Expected batch size {batch_size}, got {value.batch_size}")
            return as_batch(value, dtype=dtype, device=self._device, layout=layout)
        tensor = as_tensor(value, dtype=dtype, device=self._device, layout=layout)
        if batch_size is None:
            return tensor
        return Batch.broadcast(tensor, batch_size)

    def captured(self, batch_size: int, ctx: Any = None, *,
                 compile_depth: int = DEFAULT_DEPTH) -> Iterator[Any]:  # fmt: skip
        """A compiled epoch (docs/compile.md): yields `self(batch_size=batch_size)` until the
        source is exhausted; the op calls made between the values are traced in the first
        iteration and issued `compile_depth` values ahead after that."""
        if batch_size is None:
            raise ValueError("capture=True requires a non-None batch_size: "
                             "ExternalSource.captured(batch_size) yields Batches")
        if isinstance(compile_depth, bool) or not isinstance(compile_depth, int) or \
                compile_depth < 0:  # fmt: skip
            raise ValueError(f"ExternalSource.captured: compile_depth must be an int >= 0; got "
                             f"{compile_depth!r}")
        _check_batch_size(batch_size)
        return Session("ExternalSource", compile_depth).epoch(self._values(batch_size))

    def _values(self, batch_size: int) -> Iterator[Any]:
        while True:
            try:
                value = self(batch_size=batch_size)
            except StopIteration:
                return
            yield value


def _check_batch_size(batch_size: Any) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
        raise TypeError(f"ExternalSource: batch_size expects an int; got "
                        f"{type(batch_size).__name__}")
    if batch_size < 1:
        raise ValueError(f"ExternalSource: batch_size must be >= 1; got {batch_size}")


def _per_output(name: str, value: Any, num_outputs: int) -> list[Any]:
    if value is None or isinstance(value, str) or not isinstance(value, list | tuple):
        return [value] * num_outputs
    if len(value) != num_outputs:
        raise ValueError(f"ExternalSource: {name} has {len(value)} entries; expected one value "
                         f"or {num_outputs} (one per output)")
    return list(value)
