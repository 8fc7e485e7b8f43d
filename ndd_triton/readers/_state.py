"""`ReaderState`: a reader's position in its sample stream, with a compact text form.

The sample order is a pure function of the dataset size, the sharding settings and two seeds
(see `_sharding`), so the state is small: the epoch, where the epoch started in the ring, how
many samples of it were consumed, and the seeds. `str(state)` is URL-safe base64 of a JSON
list and is accepted back by `Reader.set_state` and by checkpoints.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

_FORMAT = 1


@dataclass(frozen=True, slots=True)
class ReaderState:
    """Position of a reader: `epoch`, ring `start`, `offset` into the epoch, and its seeds."""

    reader_type: str
    dataset_size: int
    epoch: int
    start: int
    offset: int
    batch_size: int
    seed: int
    shuffle_seed: int

    def __str__(self) -> str:
        fields = [_FORMAT, self.reader_type, self.dataset_size, self.epoch, self.start,
                  self.offset, self.batch_size, self.seed, self.shuffle_seed]  # fmt: skip
        text = json.dumps(fields, separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(text).decode().rstrip("=")

    def __repr__(self) -> str:
        return f"ReaderState('{self}')"

    @staticmethod
    def parse(text: object) -> ReaderState:
        """Inverse of `str(state)`; a `ReaderState` passes through."""
        if isinstance(text, ReaderState):
            return text
        if not isinstance(text, str):
            raise TypeError(f"Reader state must be a ReaderState or its string form; got "
                            f"{type(text).__name__}")
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            fields = json.loads(raw)
        except (binascii.Error, ValueError, UnicodeDecodeError):
            raise ValueError(f"Invalid reader state string {text!r:.80}: expected the text of "
                             "str(reader.get_state())") from None
        if not isinstance(fields, list) or len(fields) != 9 or fields[0] != _FORMAT or \
                not isinstance(fields[1], str) or \
                not all(isinstance(v, int) for v in fields[2:]):  # fmt: skip
            raise ValueError(f"Invalid reader state string {text!r:.80}: expected the text of "
                             "str(reader.get_state())")
        return ReaderState(fields[1], *fields[2:])
