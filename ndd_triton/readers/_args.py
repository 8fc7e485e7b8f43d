"""Reader constructor keywords: the common set, defaults, type checks and incompatibilities."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

COMMON: dict[str, Any] = {
    "random_shuffle": False,
    "initial_fill": 1024,
    "seed": -1,
    "shard_id": 0,
    "num_shards": 1,
    "stick_to_shard": False,
    "pad_last_batch": False,
    "prefetch_queue_depth": 1,
    "read_ahead": False,
    "dont_use_mmap": False,
    "lazy_init": False,
    "skip_cached_images": False,
    "tensor_init_bytes": 1048576,
    "enable_checkpointing": False,
}
SHUFFLE_AFTER_EPOCH: dict[str, Any] = {"shuffle_after_epoch": False,
                                       "shuffle_after_epoch_seed": None}  # fmt: skip
_BOOLS = {"random_shuffle", "stick_to_shard", "pad_last_batch", "read_ahead", "dont_use_mmap",
          "lazy_init", "skip_cached_images", "enable_checkpointing",
          "shuffle_after_epoch"}  # fmt: skip
_INTS = {"initial_fill": 1, "shard_id": 0, "num_shards": 1, "prefetch_queue_depth": 1,
         "tensor_init_bytes": 0}  # fmt: skip


def default_of(key: str, specific: dict[str, Any]) -> Any:
    """Default value of keyword `key`."""
    for table in (specific, COMMON, SHUFFLE_AFTER_EPOCH):
        if key in table:
            return table[key]
    return None


def check_int(cls: str, name: str, value: Any, minimum: int | None = None) -> int:
    """`value` as an int >= `minimum`, else TypeError/ValueError naming the argument."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{cls}: argument '{name}' expects an int; got "
                        f"{type(value).__name__} {value!r:.40}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{cls}: argument '{name}' must be >= {minimum}; got {value}")
    return int(value)


def check_bool(cls: str, name: str, value: Any) -> bool:
    """`value` as a bool (ints 0/1 accepted), else TypeError naming the argument."""
    if isinstance(value, bool | np.bool_) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"{cls}: argument '{name}' expects a bool; got {type(value).__name__} "
                    f"{value!r:.40}")


def parse_common(cls: str, kwargs: dict[str, Any], specific: dict[str, Any],
                 shuffle_after_epoch: bool) -> dict[str, Any]:  # fmt: skip
    """Merge keywords with defaults; unknown keyword -> TypeError, bad value -> Type/ValueError."""
    allowed = dict(specific)  # reader-specific keywords first (repr order); their defaults win
    for table in (COMMON, SHUFFLE_AFTER_EPOCH if shuffle_after_epoch else {}):
        for key, default in table.items():
            allowed.setdefault(key, default)
    for key in kwargs:
        if key not in allowed:
            hint = "; pass batch_size to next_epoch()" if key == "batch_size" else ""
            raise TypeError(f"{cls}.__init__() got an unexpected keyword argument '{key}'{hint}")
    args = {**allowed, **kwargs}
    for key in _BOOLS & set(args):
        args[key] = check_bool(cls, key, args[key])
    for key, minimum in _INTS.items():
        args[key] = check_int(cls, key, args[key], minimum)
    check_int(cls, "seed", args["seed"])
    if args.get("shuffle_after_epoch_seed") is not None:
        check_int(cls, "shuffle_after_epoch_seed", args["shuffle_after_epoch_seed"])
    if args["shard_id"] >= args["num_shards"]:
        raise ValueError(f"The shard_id={args['shard_id']} is invalid. Must be in range "
                         f"[0..{args['num_shards'] - 1}].")
    if args.get("shuffle_after_epoch"):
        if args["random_shuffle"]:
            raise RuntimeError(f"{cls}: shuffle_after_epoch and random_shuffle cannot both be "
                               "True; choose one shuffling method")
        if args["stick_to_shard"]:
            raise RuntimeError(f"{cls}: shuffle_after_epoch and stick_to_shard cannot both be "
                               "True; a global reshuffle moves samples between shards")
    return args


def resolve_seed(seed: int) -> int:
    """A non-negative 63-bit seed; -1 draws a fresh one from the OS."""
    if seed == -1:
        return int.from_bytes(os.urandom(8), "little") & (2**63 - 1)
    return int(seed) & (2**63 - 1)


def string_list(cls: str, name: str, value: Any) -> list[str]:
    """A str or a sequence of str as a list, else TypeError naming the argument."""
    if isinstance(value, str | os.PathLike):
        return [os.fspath(value)]
    if isinstance(value, list | tuple) and all(isinstance(v, str | os.PathLike) for v in value):
        return [os.fspath(v) for v in value]
    raise TypeError(f"{cls}: argument '{name}' expects a str or a list of str; got "
                    f"{type(value).__name__} {value!r:.60}")
