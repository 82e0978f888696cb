"""Exceptions raised by papergym.

Model output never raises (it becomes an invalid-action turn); these are for programmer errors,
missing optional dependencies and backend faults.
"""

from __future__ import annotations

import importlib
from types import ModuleType

import gymnasium


class PapergymError(Exception):
    """Base class of every papergym exception."""


class DependencyNotInstalled(PapergymError, gymnasium.error.DependencyNotInstalled):
    """An optional dependency is missing; the message names the extra that installs it."""


class BackendError(PapergymError):
    """A model backend failed after its bounded retries.

    Envs turn this into ``truncated=True`` and ``info["error"]``; it never escapes ``step``.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


def require(module: str, extra: str) -> ModuleType:
    """Import an optional dependency, or raise `DependencyNotInstalled` naming its extra.

    Args:
        module: the importable module name, e.g. ``"transformers"``.
        extra: the papergym extra that installs it, e.g. ``"llm"``.

    Returns:
        The imported module.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise DependencyNotInstalled(
            f'{module!r} is needed here but is not installed: pip install "papergym[{extra}]"'
        ) from exc
