"""Triton kernels: one launch per operator per batch, driven by per-sample tables."""

from ndd_triton.kernels.gpu import _interpreter_compat  # noqa: F401  (before any kernel runs)
