"""Random number generation: `RNG`, the thread-local default RNG and the distributions."""

from ndd_triton.random._rng import RNG, get_default_rng, set_seed

__all__ = ["RNG", "get_default_rng", "set_seed"]
