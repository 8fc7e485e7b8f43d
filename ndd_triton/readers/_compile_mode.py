"""A reader's epochs in compile mode: each epoch's `Session`, reusing the program of the last
one, and the next epoch's first batches taken ahead for it (docs/compile.md, "Epochs")."""

from __future__ import annotations

import threading
from collections import deque
from typing import Any

from ndd_triton.runtime.compiled import Session


class CompileModeEpochs:
    """Mixed into `Reader`. `_compiled`: ((thread, batch size, depth), the last Session);
    `_ahead`: the next epoch's batches taken early with their last-in-epoch flags, which
    `Reader._epoch` hands out first unless a compiled epoch adopted them with their calls."""

    _compiled: tuple[Any, Any] | None
    _ahead: deque[tuple[tuple[Any, ...], bool]]
    _open_epoch: bool

    def _compiled_epoch(self, name: str, size: int, depth: int) -> Any:
        """The compiled epoch's iterator: it reuses the last epoch's program when that one ran
        to its end in the same setting, and starts with the batches and calls it issued
        ahead when it took this epoch's first batches."""
        key, last = (threading.get_ident(), size, depth), self._compiled
        reuse = last[1] if last is not None and last[0] == key and last[1].finished else None
        session = Session(name, depth, reuse=reuse)
        ended = False
        if reuse is not None and reuse.next_epoch and len(reuse.next_epoch) == len(self._ahead):
            session.adopt(reuse.next_epoch)
            ended = any(last_in_epoch for _, last_in_epoch in self._ahead)
            self._ahead.clear()
        session.ahead = self._take_ahead
        self._compiled = (key, session)
        return session.epoch(self._epoch(as_batch=True, ended=ended))  # type: ignore[attr-defined]

    def _take_ahead(self, count: int) -> list[tuple[Any, ...]]:
        """Up to `count` batches of the next epoch, taken now (between epochs only): compile
        mode issues their first calls while the caller finishes this epoch. A loading error
        stops it; the next epoch takes that batch again (`Reader._take`) and reports it."""
        taken: list[tuple[Any, ...]] = []
        while not self._open_epoch and len(taken) < count and \
                not (self._ahead and self._ahead[-1][1]):  # fmt: skip
            try:
                item = self._take()  # type: ignore[attr-defined]
            except Exception:
                break
            values = self._wrap(item, as_batch=True)  # type: ignore[attr-defined]
            self._ahead.append((values, item.last_in_epoch))
            taken.append(values)
        return taken
