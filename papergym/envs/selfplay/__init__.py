"""`papergym/SelfPlay-v0`: challenger / solver / judge co-evolving (J-Zero), a PettingZoo environment.

PettingZoo's module convention: ``env()`` (AEC, order-enforced), ``raw_env`` and ``parallel_env``.
"""

from papergym.envs.selfplay.judges import BTJudge, ModelPreferenceJudge, PairwiseJudge, text_features
from papergym.envs.selfplay.pairs import (
    Pair,
    bradley_terry_loss,
    bt_win_rates,
    pair_accuracy,
    role_asymmetry_pairs,
    self_scored,
    subtask_amplification_pairs,
)
from papergym.envs.selfplay.selfplay_env import ENV_ID, env, parallel_env, raw_env

__all__ = [
    "ENV_ID",
    "BTJudge",
    "ModelPreferenceJudge",
    "Pair",
    "PairwiseJudge",
    "bradley_terry_loss",
    "bt_win_rates",
    "env",
    "pair_accuracy",
    "parallel_env",
    "raw_env",
    "role_asymmetry_pairs",
    "self_scored",
    "subtask_amplification_pairs",
    "text_features",
]
