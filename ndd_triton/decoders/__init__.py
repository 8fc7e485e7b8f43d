"""Decoders (`ndd.decoders.image`, ...): operator functions are installed here from schemas."""
