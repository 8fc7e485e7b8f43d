"""Triton kernels: one launch per operator per batch, driven by per-sample tables."""
