"""Operator schemas, one op (or one small family) per module, and the machinery that turns
them into public functions (`schema`, `args`, `opgen`, `calls`); see ops/README.md.

May import `core`, `random` and `decoders`; reaches execution only through `ops.calls`.
"""
