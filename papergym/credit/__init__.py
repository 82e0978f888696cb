"""Group-level rewards and per-action advantage hooks.

These are not Wrappers: they need the whole group (or batch) of trajectories. Trainers call a
`GroupReward` after a group finishes and an `AdvantageHook` when spreading advantages over tokens.

The package owns the short names trainers accept (``--group-reward``, ``--advantage-hook``):
`GROUP_REWARDS` and `ADVANTAGE_HOOKS` map them to ``module:Class``; `resolve` builds one. The
modules here import numpy at most (heavy models come in through `backends`' lazy wrappers), so the
re-exports below are eager.
"""

from __future__ import annotations

import importlib
from typing import Any

from papergym.credit.feedback import FeedbackAdvantageShaping, FeedbackRequestReward, rdpo_pairs
from papergym.credit.influence import (
    InfluenceAdvantage,
    ModelGraphAnnotator,
    NoisyAnnotator,
    ProvenanceAnnotator,
)
from papergym.credit.majority_vote import MajorityVoteReward, majority_vote
from papergym.credit.protocols import AdvantageHook, GroupReward
from papergym.credit.rzero import RZeroReward
from papergym.credit.wm_r1 import WMR1Reward

GROUP_REWARDS: dict[str, str] = {
    "majority_vote": "papergym.credit.majority_vote:MajorityVoteReward",
    "feedback_request": "papergym.credit.feedback:FeedbackRequestReward",
    "wm_r1": "papergym.credit.wm_r1:WMR1Reward",
    "rzero": "papergym.credit.rzero:RZeroReward",
}
"""Short names of every `GroupReward` in ``credit/`` (any ``module:Class`` also works)."""

ADVANTAGE_HOOKS: dict[str, str] = {
    "feedback_shaping": "papergym.credit.feedback:FeedbackAdvantageShaping",
    "influence": "papergym.credit.influence:InfluenceAdvantage",
}
"""Short names of every `AdvantageHook` in ``credit/`` (any ``module:Class`` also works)."""


def resolve(spec: str | None, table: dict[str, str], **kwargs: Any) -> Any:
    """An instance of the class named by a short name in ``table`` or by ``module:Class``.

    Args:
        spec: a key of ``table`` (e.g. ``"majority_vote"``), ``module:Class``, or None.
        table: `GROUP_REWARDS`, `ADVANTAGE_HOOKS` or `papergym.wrappers.WRAPPERS`.
        **kwargs: passed to the class.

    Returns:
        The instance, or None when ``spec`` is None.

    Raises:
        ValueError: ``spec`` is neither a short name nor ``module:Class``.
    """
    if spec is None:
        return None
    target = table.get(spec, spec)
    module, sep, name = target.partition(":")
    if not sep:
        raise ValueError(f"unknown name {spec!r}: use one of {sorted(table)} or module:Class")
    return getattr(importlib.import_module(module), name)(**kwargs)


__all__ = [
    "ADVANTAGE_HOOKS",
    "GROUP_REWARDS",
    "AdvantageHook",
    "FeedbackAdvantageShaping",
    "FeedbackRequestReward",
    "GroupReward",
    "InfluenceAdvantage",
    "MajorityVoteReward",
    "ModelGraphAnnotator",
    "NoisyAnnotator",
    "ProvenanceAnnotator",
    "RZeroReward",
    "WMR1Reward",
    "majority_vote",
    "rdpo_pairs",
    "resolve",
]
