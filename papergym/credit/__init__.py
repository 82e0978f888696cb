"""Group-level rewards and per-action advantage hooks.

These are not Wrappers: they need the whole group (or batch) of trajectories. Trainers call a
`GroupReward` after a group finishes and an `AdvantageHook` when spreading advantages over tokens.
"""

from papergym.credit.feedback import FeedbackAdvantageShaping, FeedbackRequestReward, rdpo_pairs
from papergym.credit.influence import (
    InfluenceAdvantage,
    ModelGraphAnnotator,
    NoisyAnnotator,
    ProvenanceAnnotator,
)
from papergym.credit.majority_vote import MajorityVoteReward, majority_vote
from papergym.credit.protocols import AdvantageHook, GroupReward
from papergym.credit.wm_r1 import WMR1Reward

__all__ = [
    "AdvantageHook",
    "FeedbackAdvantageShaping",
    "FeedbackRequestReward",
    "GroupReward",
    "InfluenceAdvantage",
    "MajorityVoteReward",
    "ModelGraphAnnotator",
    "NoisyAnnotator",
    "ProvenanceAnnotator",
    "WMR1Reward",
    "majority_vote",
    "rdpo_pairs",
]
