"""Lazy re-exports: a package names its public objects without importing the modules that hold them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """A module ``__getattr__`` and ``__dir__`` that import ``exports[name]`` on first access.

    Args:
        package: the ``__name__`` of the package that re-exports (for the error message).
        exports: public name -> the module that defines it (``"HFChatModel": "papergym.backends.hf"``).

    Returns:
        ``(__getattr__, __dir__)``, to assign at the package's top level.
    """

    def __getattr__(name: str) -> object:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(module), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
