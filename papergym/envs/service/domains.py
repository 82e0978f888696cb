"""The registry of service domains: name -> the `Domain` factory (a new domain adds one line)."""

from __future__ import annotations

import importlib
from functools import cache

from papergym.envs.service.domain import Domain

DOMAINS: dict[str, str] = {
    "retail": "papergym.envs.service.retail:RetailDomain",
    "airline": "papergym.envs.service.airline:AirlineDomain",
    "telecom": "papergym.envs.service.telecom:TelecomDomain",
}
"""Domain name -> ``"module:Class"`` (imported on first use)."""


@cache
def get_domain(name: str) -> Domain:
    """The domain called ``name`` (one shared instance per process).

    Raises:
        ValueError: an unknown name.
    """
    if name not in DOMAINS:
        raise ValueError(f"unknown service domain {name!r}; choose one of {sorted(DOMAINS)}")
    module, cls = DOMAINS[name].split(":")
    return getattr(importlib.import_module(module), cls)()
