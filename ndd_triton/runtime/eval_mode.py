"""`EvalMode`: deferred < eager < sync_cpu < sync_full, as thread-local context managers."""

from __future__ import annotations

import enum
import threading

_tls = threading.local()


class EvalMode(enum.Enum):
    """When an op's run phase happens relative to the call (see docs/concepts.md)."""

    deferred = 1
    eager = 2
    sync_cpu = 3
    sync_full = 4
    default = 2  # alias of eager

    def __enter__(self) -> EvalMode:
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _tls.stack.pop()

    @staticmethod
    def current() -> EvalMode:
        """The innermost active mode on this thread (eager outside any block)."""
        stack = getattr(_tls, "stack", None)
        return stack[-1] if stack else EvalMode.eager
