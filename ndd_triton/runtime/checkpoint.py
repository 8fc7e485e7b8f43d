"""Checkpoints: aggregate the states of stateful objects (readers, `RNG`) into one file.

A `Checkpoint` maps names to registered objects (anything with `get_state`/`set_state`) and
to their states. `collect()` snapshots them, `save()`/`load()` write and read JSON
(`{"version": 2, "states": {name: {"state": str, "type": type name}}}`), and a loaded state
is applied when its object is registered (or on `restore()`). Not thread-safe: one per thread.
"""

from __future__ import annotations

import json
import os
import re
import string
from typing import Any

VERSION = 2
_AUTO_PREFIX = "__op_"


class Checkpoint:
    """Named states of registered stateful objects; see the module docstring."""

    def __init__(self) -> None:
        self._ops: dict[str, Any] = {}
        self._states: dict[str, Any] = {}
        self._types: dict[str, str] = {}
        self._expected: dict[str, Any] = {}  # op_type given to set_state, checked at apply time
        self._dirty: set[str] = set()
        self._counter = 0
        self._complete = False
        self._loaded = False

    # ---- properties ------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """Names of the registered objects, in registration order."""
        return tuple(self._ops)

    @property
    def is_complete(self) -> bool:
        """True after `collect()` snapshotted every registered object."""
        return self._complete

    @property
    def is_loaded(self) -> bool:
        """True while states from `deserialize`/`load` are held (until the next collect)."""
        return self._loaded

    # ---- registration ----------------------------------------------------------------------
    def register(self, op: Any, name: str | None = None) -> str:
        """Add `op` under `name` (or an automatic `__op_<n>`); apply a loaded state for it."""
        if name is None:
            for key, registered in self._ops.items():
                if registered is op:
                    return key
            name = f"{_AUTO_PREFIX}{self._counter}"
            self._counter += 1
        elif not isinstance(name, str):
            raise TypeError(f"Checkpoint.register: name must be a str or None; got "
                            f"{type(name).__name__}")
        elif name.startswith(_AUTO_PREFIX):
            raise ValueError("Manually assigned names must not start with '__op_'.")
        hook = getattr(op, "_on_checkpoint_register", None)
        if hook is not None:
            hook()
        if name in self._dirty:
            self._apply(name, op)
        self._ops[name] = op
        if name not in self._states:
            self._complete = False
        return name

    def _apply(self, name: str, op: Any) -> None:
        stored = self._types.get(name)
        actual = type(op).__name__
        if stored is not None and stored != actual:
            raise TypeError(f"Type mismatch for operator '{name}': checkpoint stores state for "
                            f"type '{stored}', but the registered operator is of type "
                            f"'{actual}'.")
        expected = self._expected.get(name)
        if expected is not None and not _type_matches(op, expected):
            wanted = expected if isinstance(expected, str) else expected.__qualname__
            raise TypeError(f"Type mismatch for operator '{name}': the state was set for type "
                            f"'{wanted}', but the registered operator is of type '{actual}'.")
        op.set_state(self._states[name])
        self._types[name] = actual
        self._dirty.discard(name)

    # ---- snapshot and restore --------------------------------------------------------------
    def collect(self) -> None:
        """Snapshot every registered object (`op.get_state()`)."""
        states = {name: op.get_state() for name, op in self._ops.items()}
        self._states = states
        self._types = {name: type(op).__name__ for name, op in self._ops.items()}
        self._expected.clear()
        self._dirty.clear()
        self._complete = True
        self._loaded = False

    def restore(self) -> None:
        """Apply every pending (loaded or set) state to its registered object."""
        if not self._states:
            return
        orphans = sorted(self._dirty - set(self._ops))
        if orphans:
            raise RuntimeError(f"Checkpoint state has entries with no corresponding registered "
                               f"ops: {orphans}.")
        stateless = sorted(set(self._ops) - set(self._states))
        if stateless:
            raise RuntimeError(f"Checkpoint state has no entries for the registered ops: "
                               f"{stateless}.")
        for name in sorted(self._dirty, key=list(self._ops).index):
            self._apply(name, self._ops[name])

    def get_state(self, name: str) -> Any:
        """The state held for the registered object `name`."""
        if name not in self._ops:
            raise KeyError(f"No op registered under '{name}'.")
        if name not in self._states:
            raise KeyError(f"No state held for '{name}'; call collect() (or set_state) first.")
        return self._states[name]

    def set_state(self, name: str, value: Any, op_type: Any = None) -> None:
        """Hold `value` for `name`, applied at the next `register(..., name)` or `restore()`."""
        if op_type is not None and not isinstance(op_type, str | type):
            raise TypeError(f"Checkpoint.set_state: op_type must be a class or a qualified "
                            f"class name; got {type(op_type).__name__}")
        self._states[name] = value
        self._types.pop(name, None)
        if op_type is None:
            self._expected.pop(name, None)
        else:
            self._expected[name] = op_type
        self._dirty.add(name)

    def clear(self) -> None:
        """Drop objects, states, flags and the automatic-name counter."""
        self.__init__()  # type: ignore[misc]

    # ---- text and files --------------------------------------------------------------------
    def serialize(self) -> str:
        """The held states as JSON text (format version 2)."""
        if not self._states:
            raise RuntimeError("Cannot serialize an empty checkpoint. Call collect (or "
                               "set_state) first.")
        states = {}
        for name, state in self._states.items():
            kind = self._types.get(name)
            if kind is None and name in self._ops:
                kind = type(self._ops[name]).__name__
            if kind is None and isinstance(self._expected.get(name), type):
                kind = self._expected[name].__name__
            states[name] = {"state": str(state), "type": kind}
        return json.dumps({"version": VERSION, "states": states})

    def deserialize(self, data: str) -> None:
        """Replace the held states with those of `data` (applied at register or restore)."""
        parsed = json.loads(data)
        version = parsed.get("version") if isinstance(parsed, dict) else None
        if version != VERSION:
            raise ValueError(f"Unsupported checkpoint format version {version}; expected "
                             f"{VERSION}.")
        entries = parsed.get("states")
        if not isinstance(entries, dict) or not all(
                isinstance(e, dict) and isinstance(e.get("state"), str) for e in entries.values()):
            raise ValueError("Malformed checkpoint: expected 'states' to map names to "
                             "{'state': str, 'type': str} objects")
        self._states = {name: e["state"] for name, e in entries.items()}
        self._types = {name: e["type"] for name, e in entries.items()
                       if isinstance(e.get("type"), str)}  # fmt: skip
        self._expected.clear()
        self._dirty = set(self._states)
        self._loaded = True
        self._complete = False

    def save(self, filename: str | os.PathLike[str]) -> str:
        """Write `serialize()` to `filename`; a `{seq}` field picks the first free number."""
        pattern = os.fspath(filename)
        text = self.serialize()
        if _has_seq(pattern):
            seq = 0
            while os.path.exists(pattern.format(seq=seq)):
                seq += 1
            path = pattern.format(seq=seq)
        else:
            path = pattern  # [Q] DALI 2.4 loops forever here when the file exists; we overwrite
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def load(self, filename: str | os.PathLike[str]) -> str:
        """Read the matching file with the highest `{seq}` number; returns its path."""
        pattern = os.fspath(filename)
        path = _latest(pattern) if _has_seq(pattern) else (
            pattern if os.path.isfile(pattern) else None)  # fmt: skip
        if path is None:
            raise FileNotFoundError(f"No checkpoint file matches filename {pattern!r}")
        with open(path, encoding="utf-8") as f:
            self.deserialize(f.read())
        return path


def _type_matches(op: Any, expected: str | type) -> bool:
    if isinstance(expected, type):
        return isinstance(op, expected)
    cls = type(op)
    return expected in (cls.__name__, cls.__qualname__, f"{cls.__module__}.{cls.__qualname__}")


def _has_seq(pattern: str) -> bool:
    fields = [f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None]
    if any(f != "seq" for f in fields):
        raise ValueError(f"Checkpoint filename {pattern!r}: the only allowed placeholder is "
                         f"{{seq}}; got {fields}")
    return bool(fields)


def _latest(pattern: str) -> str | None:
    """The existing file `pattern.format(seq=n)` with the highest n."""
    folder, base = os.path.split(pattern)
    regex = "".join(re.escape(text) + ("(\\d+)" if field is not None else "")
                    for text, field, _, _ in string.Formatter().parse(base))  # fmt: skip
    best: tuple[int, str] | None = None
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return None
    for name in names:
        match = re.fullmatch(regex, name)
        if match is None:
            continue
        seq = int(match.group(1))
        path = pattern.format(seq=seq)
        if os.path.basename(path) == name and (best is None or seq > best[0]):
            best = (seq, path)
    return None if best is None else best[1]
