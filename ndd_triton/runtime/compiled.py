"""Compile mode (`next_epoch(batch_size, compile=True)`): trace the loop body once, run ahead.

A `Session` wraps one epoch's source iterator (`epoch`). Iteration 0 runs eagerly while every
op call of the caller's thread is recorded (`trace.CallRecord`, plain data). From iteration 1
on, the session issues the recorded program on the source values of the iterations ahead
(`depth` of them beyond the current one) as soon as those are read, so the executor computes
them while the caller is still busy with the current one; the caller's calls are then matched
against the program and answered with the results already issued. Issuing runs the same
prepare as eager mode, in iteration order, so random ops draw exactly what eager mode draws.

A reader's next epoch may reuse a finished epoch's program (`reuse=`): its iterations are
issued ahead too, and re-traced from the first differing call if the loop body changed. Until
the caller's iteration 0 has made the program's first random call or first call reading an
object compared by identity (`_barrier`: an RNG or batch the loop body may make anew each
epoch), iterations are issued ahead only up to that call: a loop body that creates its RNG per
epoch then re-traces there having issued (and computed) nothing it throws away, the calls before
it (the decoding) kept for every iteration read ahead.

The first call that differs from the trace (another op, another constant, an input from
elsewhere, a missing or extra call) ends compile mode for the rest of the epoch: one
`CompileFallbackWarning` names it, the RNGs go back to their state before that call (undoing
the draws of everything issued after it) and the call runs eagerly, as do all later ones.
"""

from __future__ import annotations

import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

from ndd_triton.core.storage import ensure_pool_for
from ndd_triton.random._rng import RNG, get_default_rng
from ndd_triton.runtime import profiling as _profiling
from ndd_triton.runtime.eval_context import EvalContext
from ndd_triton.runtime.eval_mode import EvalMode
from ndd_triton.runtime.fusion import Group, issue_member, plan_groups
from ndd_triton.runtime.invocation import user_callsite
from ndd_triton.runtime.issued import (
    CompiledEpoch,
    Failed,
    Issued,
    as_tuple,
    invocations,
    speculation_barrier,
)
from ndd_triton.runtime.trace import CallRecord, IterationRefs

DEFAULT_DEPTH = 2
ACTIVE = [0]  # open sessions in any thread: `call_op` looks further only when this is not 0
PLAIN_CALL: list[Callable[..., Any]] = []  # prepare's call_op without the session hook
PREPARE: list[Callable[..., Any]] = []  # prepare's `prepare` (a call prepared, not scheduled)
_tls = threading.local()
_active_lock = threading.Lock()
_END = object()


class CompileFallbackWarning(UserWarning):
    """A compiled epoch met a call that differs from its trace and continues eagerly."""


def current() -> Session | None:
    """The innermost open session of this thread (None when there is none)."""
    stack = getattr(_tls, "stack", None)
    return stack[-1] if stack else None


class Session:
    """One compiled epoch (see the module docstring)."""

    def __init__(self, name: str, depth: int = DEFAULT_DEPTH, fuse: bool = True,
                 reuse: Session | None = None) -> None:  # fmt: skip
        self.name = name
        self.depth = depth
        ensure_pool_for(depth + 2)  # issued ahead, this epoch's and the next one's batches
        self.fuse = fuse
        # `reuse`: a finished epoch's session; its program is issued from iteration 0 on
        self.reused = reuse is not None
        self.program: list[CallRecord] | None = reuse.program if reuse is not None else None
        self.groups: dict[int, Group] = reuse.groups if reuse is not None else {}
        self.eager = False  # fell back: everything runs as eager mode does
        self.iteration = -1
        self.position = 0  # calls made so far in the current iteration
        self._trace: list[CallRecord] = []
        self._refs: IterationRefs | None = None  # iteration 0's
        self._current: Issued | None = None
        self._buffered: deque[tuple[Any, Issued | None]] = deque()
        self._rngs: list[RNG] = []
        self._stalled = False  # an issue failed part-way: nothing later is issued
        self.fallback_reason: str | None = None
        self.replayed = 0  # calls answered from the program
        self.finished = False  # the epoch ran to its end in compile mode (reusable program)
        # a reused program is issued ahead only up to `_barrier` until iteration 0 confirms it
        self._barrier = speculation_barrier(self.program) if reuse else 0
        self._confirmed = reuse is None or self._barrier >= len(self.program or ())
        if reuse is not None:
            self._rngs = reuse._rngs
        self.ahead: Callable[[int], list[Any]] | None = None  # the reader's next batches
        self.next_epoch: list[tuple[Any, Issued]] = []  # issued on them (`_issue_next_epoch`)
        self.adopted, self._ahead_taken = 0, False  # iterations started with; taken ahead

    # ---- the epoch ------------------------------------------------------------------------
    def epoch(self, source: Iterator[Any]) -> CompiledEpoch:
        """The epoch's iterator: the source's values; op calls in between are compiled."""
        return CompiledEpoch(self, self._run(source))

    def _run(self, source: Iterator[Any]) -> Iterator[Any]:
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        with _active_lock:
            ACTIVE[0] += 1
        try:
            if self.program is None:  # trace iteration 0
                first = next(source, _END)
                if first is _END:
                    return
                self.iteration = 0
                self._refs = IterationRefs(as_tuple(first))
                yield first
                self._end_trace()
            while True:
                if self._refs is not None:  # a reused program re-traced in iteration 0
                    self._end_trace()
                self._fill(source)
                if not self._buffered:
                    nxt = next(source, _END)
                    if nxt is _END:
                        break
                    self._buffered.append((nxt, None))
                values, issued = self._buffered.popleft()
                if isinstance(values, Failed):
                    raise values.error
                self._enter(values, issued)
                yield values
            self._check_complete()
            self.finished = not self.eager and self._refs is None
        finally:
            with _active_lock:
                ACTIVE[0] -= 1
            if self in stack:
                stack.remove(self)
            self._undo_ahead()

    def _end_trace(self) -> None:
        self.program, self._trace, self._refs = self._trace, [], None
        self._confirmed = True  # this epoch's own loop body
        if not self.program:  # DALI 2.4 warns the same way
            warnings.warn(f"compile mode ({self.name}): no operators were called during the "
                          "traced first iteration; the epoch runs eagerly",
                          CompileFallbackWarning, stacklevel=3)  # fmt: skip
            self.eager = True
            self.fallback_reason = "nothing traced"
        rngs = [get_default_rng()]
        for rec in self.program:
            rngs += [r for r in rec.rngs() if all(r is not seen for seen in rngs)]
        self._rngs = rngs
        if self.fuse:
            old, self.groups = self.groups, plan_groups(self.program)
            for _, ahead in self._buffered:  # kept prefixes of a re-traced reused program
                if ahead is not None:
                    ahead.keep_groups(old, self.groups)

    def _fill(self, source: Iterator[Any]) -> None:
        """Read and issue iterations until `depth` are ahead of the one about to start (first
        those read but not issued, after a re-trace)."""
        for k, (values, issued) in enumerate(self._buffered):
            if self.eager or self._stalled:
                break
            if issued is None:
                self._buffered[k] = (values, self._issue(as_tuple(values)))
            elif not self._confirmed or issued.issued >= len(self.program or ()):
                continue
            else:  # read ahead up to the barrier: the rest of its calls
                self._issue_calls(issued)
        while not self.eager and not self._stalled and len(self._buffered) <= self.depth:
            try:
                values = next(source, _END)
            except Exception as error:
                self._buffered.append((Failed(error), None))
                self._stalled = True
                return
            if values is _END:
                self._issue_next_epoch()
                return
            issued = self._issue(as_tuple(values))
            self._buffered.append((values, issued))

    def _issue_next_epoch(self) -> None:
        """The source ended: take the reader's next `depth + 1` batches and issue their calls
        up to the barrier (the decoding: no draws, only the batch read) to run while the caller
        finishes this epoch. A next epoch of this program adopts them (`adopt`), any other
        drops them (the reader hands the batches out again)."""
        if self.ahead is None or self._ahead_taken or self.eager or self._stalled or \
                not self._confirmed:  # fmt: skip
            return
        self._ahead_taken = True
        barrier = speculation_barrier(self.program)
        for values in self.ahead(self.depth + 1) if barrier else ():
            issued = Issued(as_tuple(values))
            self._issue_calls(issued, barrier)
            if self._stalled:  # a prepare failed: the next epoch makes (and reports) the calls
                self._stalled, self.next_epoch = False, []
                return
            # no draws so far, and the RNGs move on before the next epoch: these states are the
            # ones before the barrier call, filled in when it is issued (`_issue_calls`)
            issued.snapshots = [None] * len(issued.snapshots)
            self.next_epoch.append((values, issued))

    def adopt(self, ahead: list[tuple[Any, Issued]]) -> None:
        """Start with the iterations the last epoch issued ahead (`_issue_next_epoch`)."""
        self._buffered.extend(ahead)
        self.adopted = len(ahead)

    def _issue(self, source_values: tuple[Any, ...]) -> Issued:
        """Prepare (and schedule) the program's calls on one iteration's source values."""
        issued = Issued(source_values)
        self._issue_calls(issued)
        return issued

    def _issue_calls(self, issued: Issued, stop: int | None = None) -> None:
        """Issue the program's calls from where `issued` stopped: to the end, or up to the
        barrier while the program is not confirmed. A fusion group reaching past the barrier
        has its earlier members prepared (their results computed only if read) and is
        scheduled when its last member is issued, after the confirmation; one whose earlier
        calls were issued on their own (before a re-trace) runs as its members' own calls."""
        program = self.program
        assert program is not None
        plain = PLAIN_CALL[0]
        refs = issued.refs
        prof = bool(_profiling.ACTIVE)
        members = issued.members  # group start -> prepared members so far
        start = issued.issued
        if stop is None:
            stop = len(program) if self._confirmed else self._barrier
        if start >= stop:
            return
        del issued.snapshots[start:]  # (the end state of an earlier, partial issue)
        for p in range(start, stop):
            rec = program[p]
            snapshot = [(r, r.state) for r in self._rngs]
            if p == start and start and issued.snapshots[0] is None:  # issued ahead, drew nothing
                issued.snapshots = [snapshot] * start
            issued.snapshots.append(snapshot)
            inputs = [refs.resolve(r) for r in rec.inputs]
            args = [refs.resolve(r) for r in rec.args]
            group = self.groups.get(p)
            if group is not None and len(members.get(group.calls[0], ())) != \
                    sum(q < p for q in group.calls):  # fmt: skip
                group = None  # its earlier calls were issued on their own (another program)
            try:
                with ExitStack() as stack:
                    if rec.ctx is not EvalContext.current():
                        stack.enter_context(rec.ctx)
                    if rec.mode is not EvalMode.current():
                        stack.enter_context(rec.mode)
                    batch_size, device = refs.resolve(rec.batch_size), refs.resolve(rec.device)
                    if group is None:
                        result = plain(rec.schema, inputs, args, batch_size, device)
                        scheduled = [((rec.name,), invocations(result))] if prof else []
                    else:
                        prep = PREPARE[0](rec.schema, inputs, args, batch_size, device)
                        result, scheduled = issue_member(group, p, prep, members, rec.ctx)
                        if p == group.last:  # scheduled: its prepared members are not needed
                            members.pop(group.calls[0], None)
            except Exception:
                self._stalled = True  # the caller's own call raises it, eagerly
                return
            refs.add_results(result)
            if prof:
                issued.groups += [(names, invs) for names, invs in scheduled if invs]
        issued.snapshots.append([(r, r.state) for r in self._rngs])

    def _confirm(self) -> None:
        """Iteration 0 made the barrier call as the program does: issue the rest of the
        current iteration, then of those read ahead, in iteration order (eager mode's draws)."""
        self._confirmed = True
        current = self._current
        if current is not None and not self._stalled:
            self._issue_calls(current)
            if current.groups:  # (`_enter` leaves a partly issued iteration to this point)
                _profiling.add_compiled(self.name, self.iteration, current.groups)
        for _, issued in self._buffered:
            if issued is None or self._stalled:
                break
            self._issue_calls(issued)

    def _enter(self, values: Any, issued: Issued | None) -> None:
        self._check_complete()
        self.iteration += 1
        self.position = 0
        self._current = None if self.eager else issued
        if issued is not None and not self.eager and issued.groups and self._confirmed:
            _profiling.add_compiled(self.name, self.iteration, issued.groups)

    def _check_complete(self) -> None:
        """The iteration that ends must have made every call of the program."""
        program = self.program
        first = 0 if self.reused else 1  # iteration 0 was traced, unless the program is reused
        if self.eager or program is None or self.iteration < first or \
                self.position >= len(program):  # fmt: skip
            return
        rec = program[self.position]
        self._fall_back(f"iteration {self.iteration} ended after {self.position} calls; the "
                        f"trace continues with {rec.where()}", rec.callsite)  # fmt: skip

    def _undo_ahead(self) -> None:
        """The epoch ends early (the loop broke): undo the draws issued after this point."""
        current = self._current
        ahead = any(issued is not None for _, issued in self._buffered)
        if not self.eager and current is not None and (ahead or self.position < current.issued):
            current.restore(self.position)
        self._buffered.clear()
        self._current = None

    # ---- calls -----------------------------------------------------------------------------
    def call(self, schema: Any, inputs: Any, arg_values: Any, batch_size: Any,
             device: Any) -> Any:  # fmt: skip
        """An op call of the caller's loop body (traced, answered from the program, or eager)."""
        plain = PLAIN_CALL[0]
        if self.eager or self.iteration < 0:
            return plain(schema, inputs, arg_values, batch_size, device)
        if self._refs is not None:  # iteration 0: run eagerly and record
            result = plain(schema, inputs, arg_values, batch_size, device)
            self._trace.append(self._refs.record(schema, inputs, arg_values, batch_size, device,
                                                 EvalMode.current(), EvalContext.current(),
                                                 user_callsite()))  # fmt: skip
            self._refs.add_results(result)
            return result
        program, issued, p = self.program, self._current, self.position
        assert program is not None
        if p >= len(program) and self.reused and self.iteration == 0 and issued is not None:
            return self._retrace(schema, inputs, arg_values, batch_size, device)
        if p >= len(program):
            self._fall_back(f"iteration {self.iteration} makes more calls than the trace's "
                            f"{len(program)}: call {p} is '{schema.name}'", user_callsite())
        elif issued is None or p >= issued.issued:
            if issued is not None and not self._confirmed and p == self._barrier:
                rec = issued.refs.record(schema, inputs, arg_values, batch_size, device,
                                         EvalMode.current(), EvalContext.current(), None)
                if program[p].difference(rec) is not None:  # not last epoch's loop body
                    return self._retrace(schema, inputs, arg_values, batch_size, device)
                self._confirm()
                if p < issued.issued:
                    self.position = p + 1
                    self.replayed += 1
                    return issued.refs.results[p]
            self._fall_back(f"call {p} ({program[p].where()}) could not be issued ahead",
                            user_callsite())  # fmt: skip
        else:
            rec = issued.refs.record(schema, inputs, arg_values, batch_size, device,
                                     EvalMode.current(), EvalContext.current(), None)  # fmt: skip
            diff = program[p].difference(rec)
            if diff is None:
                self.position = p + 1
                self.replayed += 1
                return issued.refs.results[p]
            if self.reused and self.iteration == 0:  # another loop body than last epoch's
                return self._retrace(schema, inputs, arg_values, batch_size, device)
            self._fall_back(f"iteration {self.iteration}, call {p} ('{schema.name}') differs "
                            f"from the trace: {diff}", user_callsite())  # fmt: skip
        return plain(schema, inputs, arg_values, batch_size, device)

    def _retrace(self, schema: Any, inputs: Any, arg_values: Any, batch_size: Any,
                 device: Any) -> Any:  # fmt: skip
        """Iteration 0 of a reused program differs at call p: keep calls < p (they matched),
        undo the draws issued from p on and trace the rest of the iteration (no warning: a loop
        body may change between epochs); the iterations read ahead are issued again later."""
        issued, p = self._current, self.position
        assert issued is not None
        issued.restore(p)
        issued.truncate(p, self.groups)
        self.reused, self._current, self._refs = False, None, issued.refs
        self._trace = list(self.program[:p]) if self.program is not None else []
        # calls before the barrier draw nothing: the iterations read ahead keep those (the
        # same calls in the new trace); past it, they drew after this iteration: issued again
        keep = not self._confirmed and p <= self._barrier
        for _, ahead in self._buffered:
            if keep and ahead is not None:
                ahead.truncate(p, self.groups)
        self._buffered = deque((values, ahead if keep else None)
                               for values, ahead in self._buffered)  # fmt: skip
        return self.call(schema, inputs, arg_values, batch_size, device)

    def _fall_back(self, reason: str, where: tuple[str, int] | None) -> None:
        """Continue the epoch eagerly from the current call, with one warning."""
        if self._current is not None:
            self._current.restore(self.position)
        self.eager = True
        self._current = None
        self._buffered = deque((values, None) for values, _ in self._buffered)
        self.fallback_reason = reason
        message = f"compile mode ({self.name}): {reason}; the rest of the epoch runs eagerly"
        if where is None:
            warnings.warn(message, CompileFallbackWarning, stacklevel=4)
        else:
            warnings.warn_explicit(message, CompileFallbackWarning, where[0], where[1])
