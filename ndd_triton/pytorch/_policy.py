"""`LastBatchPolicy`: what a loader does with the last, partly filled batch of an epoch.

DALI's PyTorch plugin names (`nvidia.dali.plugin.base_iterator.LastBatchPolicy`):

* FILL: yield it full, as the reader filled it (the next samples of the ring, or the shard's
  last sample repeated with `pad_last_batch`);
* DROP: do not yield it (with `pad_last_batch`, every rank drops down to the smallest shard, so
  all ranks still yield the same number of batches);
* PARTIAL: yield only its real samples (every rank yields the same number of batches; the last
  one may be shorter, or empty on a rank whose shard is smaller than the padded size).
"""

from __future__ import annotations

import enum
from typing import Any

from ndd_triton.readers._control import EpochPlan


class LastBatchPolicy(enum.Enum):
    """FILL, DROP or PARTIAL; see the module docstring."""

    FILL = "fill"
    DROP = "drop"
    PARTIAL = "partial"

    @staticmethod
    def parse(value: Any, where: str) -> LastBatchPolicy:
        """A policy from itself or its name (any case)."""
        if isinstance(value, LastBatchPolicy):
            return value
        if isinstance(value, str):
            for policy in LastBatchPolicy:
                if policy.value == value.lower():
                    return policy
        raise ValueError(f"{where}: argument 'last_batch_policy' must be one of 'fill', 'drop', "
                         f"'partial' (or a LastBatchPolicy); got {value!r}")


def batches_yielded(policy: LastBatchPolicy, plan: EpochPlan, batch_size: int) -> int:
    """How many batches of the epoch the loader yields."""
    if policy is LastBatchPolicy.DROP:
        return min(plan.batches, plan.min_valid // batch_size)
    return plan.batches


def samples_kept(policy: LastBatchPolicy, plan: EpochPlan, index: int,
                 batch_size: int) -> int | None:  # fmt: skip
    """Samples of batch `index` to keep (None: all)."""
    if policy is not LastBatchPolicy.PARTIAL:
        return None
    real = plan.valid - index * batch_size
    return None if real >= batch_size else max(real, 0)
