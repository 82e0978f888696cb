"""The five domains of the multi-domain fusion paper (papers/training.md §3): math, code, science,
instruction following and agent (tool choice). Each module exports ``DOMAIN``, a `Domain`."""

from __future__ import annotations

import importlib
from functools import cache

from papergym.envs.reasoning.problem import Domain

DOMAIN_MODULES: dict[str, str] = {
    "math": "papergym.envs.reasoning.domains.math",
    "code": "papergym.envs.reasoning.domains.code",
    "science": "papergym.envs.reasoning.domains.science",
    "instruction": "papergym.envs.reasoning.domains.instruction",
    "agent": "papergym.envs.reasoning.domains.agent",
}
DOMAIN_NAMES: tuple[str, ...] = tuple(DOMAIN_MODULES)


@cache
def get_domain(name: str) -> Domain:
    """The domain called ``name``.

    Raises:
        ValueError: no such domain.
    """
    if name not in DOMAIN_MODULES:
        raise ValueError(f"unknown reasoning domain {name!r}; choose from {DOMAIN_NAMES}")
    return importlib.import_module(DOMAIN_MODULES[name]).DOMAIN
