"""`papergym/MultiDomain-v0`: a balanced mixture of the reasoning domains."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from papergym.core.tasks import DEFAULT_SPLIT_SIZES
from papergym.core.text_env import ObsMode, TextEnv
from papergym.envs.reasoning.domains import DOMAIN_NAMES
from papergym.envs.reasoning.reasoning_env import ReasoningEnv


class MultiDomainEnv(ReasoningEnv):
    """A balanced mixture of reasoning domains (Mix-RL's training distribution).

    ## Description
    Each episode draws a domain uniformly from ``domains``, then a problem of that domain; the
    rest is `ReasoningEnv`. ``info["domain"]`` names the episode's domain at reset and at every
    step, so a trainer can route rewards or teachers by domain (multi-teacher distillation).

    ## Observation
    As `ReasoningEnv`: the system prompt and the problem, then a one-line verdict.

    ## Action
    A ``str``, the whole completion.

    ## Reward
    As `ReasoningEnv`: ``correct`` plus ``format``, with the episode's domain's verifier.

    ## Episode End
    Terminates after the first action.

    ## Arguments
    - ``domains``: the domains to mix (default: all five).
    - ``difficulty``, ``test_size``, ``obs_mode``, ``render_mode``, ``format_penalty``: as in
      `ReasoningEnv`.

    ## Paper
    M2RL, "To Mix or To Merge" (arXiv 2602.12566): Mix-RL blends all five domains with balanced
    data (papers/training.md §3.2).

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/MultiDomain-v0", domains=("math", "code"))
    >>> _, info = env.reset(seed=3)
    >>> info["domain"] in ("math", "code")
    True
    """

    def __init__(
        self,
        domains: Sequence[str] = DOMAIN_NAMES,
        *,
        difficulty: int | None = None,
        test_size: int = DEFAULT_SPLIT_SIZES["test"],
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
    ) -> None:
        if isinstance(domains, str):
            raise ValueError("domains takes a sequence of domain names, e.g. ('math', 'code')")
        self._configure(
            tuple(domains), difficulty, {"train": DEFAULT_SPLIT_SIZES["train"], "test": test_size}
        )
        TextEnv.__init__(self, obs_mode=obs_mode, render_mode=render_mode, format_penalty=format_penalty)


CONTRACT_VARIANTS: list[dict[str, Any]] = [{}, {"domains": ("math", "instruction")}]
