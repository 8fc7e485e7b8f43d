"""Operator schemas, one op (or one small family) per module; see ops/README.md."""
