"""papergym: Gymnasium / PettingZoo environments for the settings of ten 2026 papers on RL for LLM agents.

``import papergym`` registers every id with Gymnasium::

    import gymnasium as gym
    import papergym

    env = gym.make("papergym/Reasoning-v0", domain="math")

Multi-agent (PettingZoo) ids are built with ``papergym.make_multiagent(id, parallel=False)``.
"""

from papergym.envs import CATALOGUE, ENV_IDS
from papergym.envs.multiagent import MULTIAGENT_CATALOGUE, MULTIAGENT_IDS, make_multiagent

__version__ = "0.1.0"
__all__ = ["CATALOGUE", "ENV_IDS", "MULTIAGENT_CATALOGUE", "MULTIAGENT_IDS", "__version__", "make_multiagent"]
