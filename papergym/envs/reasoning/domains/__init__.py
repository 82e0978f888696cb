"""The five domains of the multi-domain fusion paper (papers/training.md §3): math, code, science,
instruction following and agent (tool choice), plus two CPU-scale domains for the tiny LM
(``countdown``, ``arith``). Each module exports ``DOMAIN``, a `Domain`."""

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
    "countdown": "papergym.envs.reasoning.domains.countdown",
    "arith": "papergym.envs.reasoning.domains.arith",
}
DOMAIN_NAMES: tuple[str, ...] = ("math", "code", "science", "instruction", "agent")
"""The paper's five domains (MultiDomain-v0's default mixture)."""
EXTRA_DOMAINS: tuple[str, ...] = ("countdown", "arith")
"""Domains beyond the paper's five, sized for the tiny LM: ``countdown`` (Countdown-lite, the CPU-scale
ES-vs-GRPO task of papers/training.md §5.5; several solutions per task) and ``arith`` (one-step
arithmetic with a unique integer answer, e.g. for TTPO's majority vote)."""


@cache
def get_domain(name: str) -> Domain:
    """The domain called ``name``.

    Raises:
        ValueError: no such domain.
    """
    if name not in DOMAIN_MODULES:
        raise ValueError(f"unknown reasoning domain {name!r}; choose from {tuple(DOMAIN_MODULES)}")
    return importlib.import_module(DOMAIN_MODULES[name]).DOMAIN
