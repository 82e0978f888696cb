"""Multi-agent (PettingZoo) ids: not Gymnasium ids, so they are catalogued here and built with
`make_multiagent` (DESIGN.md: the module exports ``env()``, ``raw_env()`` and ``parallel_env()``)."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MultiAgentEntry:
    """One multi-agent id.

    Attributes:
        id: the papergym id.
        module: the module exporting ``env``, ``raw_env`` and ``parallel_env``.
        paper: the paper whose setting it packages.
        summary: what it simulates, in one line.
        backends: its embedded default backends, in words.
    """

    id: str
    module: str
    paper: str
    summary: str
    backends: str


MULTIAGENT_CATALOGUE: tuple[MultiAgentEntry, ...] = (
    MultiAgentEntry(
        "papergym/SelfPlay-v0",
        "papergym.envs.selfplay",
        "J-Zero: challenger / solver / judge co-evolving (R-Zero precursor)",
        "PettingZoo: a challenger writes tasks, a solver answers G times, a judge scores; structural pairs",
        "procedural writing briefs and reasoning generators; Bradley-Terry text-feature judge",
    ),
)
MULTIAGENT_IDS: tuple[str, ...] = tuple(e.id for e in MULTIAGENT_CATALOGUE)


def make_multiagent(env_id: str, *, parallel: bool = False, **kwargs: Any) -> Any:
    """Build a multi-agent id: its AEC ``env(**kwargs)``, or ``parallel_env(**kwargs)`` if ``parallel``.

    >>> make_multiagent("papergym/SelfPlay-v0", parallel=True).possible_agents
    ['challenger', 'solver', 'judge']
    """
    for e in MULTIAGENT_CATALOGUE:
        if e.id == env_id:
            module = importlib.import_module(e.module)
            return (module.parallel_env if parallel else module.env)(**kwargs)
    raise ValueError(
        f"unknown multi-agent id {env_id!r}; multi-agent ids: {', '.join(MULTIAGENT_IDS)} "
        "(single-agent ids are built with gymnasium.make)"
    )
