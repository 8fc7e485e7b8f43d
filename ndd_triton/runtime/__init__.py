"""Executing op calls: prepare, dispatch, the executor, eval modes, contexts, streams, pools.

May import: `core`, `random`, `decoders` (codec helpers), `ops` (schemas) and `kernels` (the
kernel registry). Operator definitions never import the runtime; they reach it through the call
hooks the runtime connects at import (`ops.calls`).
"""
