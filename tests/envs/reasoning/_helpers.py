"""Shared pieces of the reasoning-domain tests: the seeds, the levels and the generated problems."""

from __future__ import annotations

import random
from functools import cache

from papergym.envs.reasoning.domains import get_domain
from papergym.envs.reasoning.problem import Problem

SEEDS = range(300)
LEVELS = (1, 2, 3)


@cache
def generated(name: str, level: int) -> tuple[Problem, ...]:
    """Domain ``name``'s problem at ``level`` for each seed of `SEEDS`, each from its own
    ``random.Random(seed)``. Generated once per session and shared by the common and the per-domain
    tests, so treat the problems as read-only."""
    domain = get_domain(name)
    return tuple(domain.generate(random.Random(seed), level) for seed in SEEDS)
