"""Text states of the random generators a loader saves: ndd `RNG`, `torch.Generator`, NumPy.

Every state is a JSON-compatible value, so a loader's `state_dict()` can be written with
`json`, `torch.save` or a checkpoint file alike.
"""

from __future__ import annotations

import base64
from typing import Any

import numpy as np
import torch

from ndd_triton.random import RNG


def check(rng: Any, where: str) -> None:
    """TypeError unless `rng` is a generator whose state can be saved."""
    if not isinstance(rng, RNG | torch.Generator | np.random.Generator):
        raise TypeError(f"{where}: argument 'rngs' expects ndd.random.RNG, torch.Generator or "
                        f"numpy.random.Generator objects; got {type(rng).__name__}")


def get(rng: Any) -> Any:
    """The state of `rng` as a JSON-compatible value."""
    if isinstance(rng, RNG):
        return str(rng.get_state())
    if isinstance(rng, torch.Generator):
        raw = rng.get_state().numpy().tobytes()
        return base64.b64encode(raw).decode()
    return _jsonable(rng.bit_generator.state)


def put(rng: Any, state: Any) -> None:
    """Restore a state from `get`."""
    if isinstance(rng, RNG):
        rng.set_state(state)
    elif isinstance(rng, torch.Generator):
        raw = np.frombuffer(base64.b64decode(state), dtype=np.uint8).copy()
        rng.set_state(torch.from_numpy(raw))
    else:
        rng.bit_generator.state = state


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.integer):
        return int(value)
    return value
