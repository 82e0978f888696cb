"""papergym: Gymnasium / PettingZoo environments for the settings of ten 2026 papers on RL for LLM agents.

``import papergym`` registers every id with Gymnasium::

    import gymnasium as gym
    import papergym

    env = gym.make("papergym/Reasoning-v0", domain="math")

Multi-agent (PettingZoo) ids are built with ``papergym.make_multiagent(id, parallel=False)``; episodes are
collected with ``papergym.rollout`` / ``papergym.rollout_group``. The subpackages ``papergym.backends``,
``papergym.credit`` and ``papergym.wrappers`` load on first attribute access, so ``import papergym`` needs
only gymnasium, numpy and the standard library.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from papergym.core.trajectory import rollout, rollout_group
from papergym.envs import CATALOGUE, ENV_IDS
from papergym.envs.multiagent import MULTIAGENT_CATALOGUE, MULTIAGENT_IDS, make_multiagent

__version__ = "0.1.0"
_SUBPACKAGES = ("backends", "credit", "wrappers", "core", "envs")


def __getattr__(name: str) -> ModuleType:
    """Load a subpackage on first access (``papergym.backends.HFChatModel`` without importing it up front)."""
    if name in _SUBPACKAGES:
        return importlib.import_module(f"papergym.{name}")
    raise AttributeError(f"module 'papergym' has no attribute {name!r}")


__all__ = [
    "CATALOGUE",
    "ENV_IDS",
    "MULTIAGENT_CATALOGUE",
    "MULTIAGENT_IDS",
    "__version__",
    "make_multiagent",
    "rollout",
    "rollout_group",
]
