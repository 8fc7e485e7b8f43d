"""A reader's compiled epochs (`next_epoch(..., compile=True)`, docs/compile.md "Epochs").

Each compiled epoch is a `runtime.compiled.Session`. The reader keeps the last one: the next
compiled epoch, on the same thread with the same batch size and depth, reuses its program when
it ran to its end in compile mode. Near its end that session also reads the first `depth`
batches of the next epoch (`read_ahead`: kept on the reader, so that any next epoch, compiled or
not, starts with them) and issues its program on them with the RNG states it would have then,
putting the RNGs back right after. The next compiled epoch adopts those issued iterations when
the RNGs are still where the last epoch left them (nothing drew in between), so its first batch
is computed while the caller is still in the last one; otherwise they are issued again.
"""

from __future__ import annotations

import threading
from typing import Any

from ndd_triton.runtime.compiled import Session


def compiled_epoch(reader: Any, epoch: Any, name: str, size: int, depth: int) -> Any:
    """The compiled iterator over `epoch` (the reader's epoch generator)."""
    key, last = (threading.get_ident(), size, depth), reader._compiled
    reuse = last[1] if last is not None and last[0] == key and last[1].finished else None
    session = Session(name, depth, reuse=reuse, spill=lambda n: read_ahead(reader, n),
                      pending=lambda: [values for values, _ in reader._ahead])  # fmt: skip
    reader._compiled = (key, session)
    return session.epoch(epoch)


def read_ahead(reader: Any, count: int) -> list[Any]:
    """Up to `count` batches of the next epoch, read now and kept on the reader (its next epoch
    yields them first). Stops at that epoch's last batch; a loading error stops it quietly (the
    next epoch reads the failed batch again and raises there)."""
    got: list[Any] = []
    while len(got) < count and not (reader._ahead and reader._ahead[-1][1]):
        try:
            item = reader._take()
        except Exception:
            break
        values = reader._wrap(item, as_batch=True)
        reader._ahead.append((values, item.last_in_epoch))
        got.append(values)
    return got


def forget(reader: Any) -> None:
    """Drop what was read ahead and the last compiled epoch (the reader was rewound)."""
    reader._ahead.clear()
    reader._compiled = None
