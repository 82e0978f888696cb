"""The one function that turns a backend kwarg into a backend (the rule in `papergym.backends`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

R = TypeVar("R")


def resolve_backend(
    value: object,
    *,
    role: str,
    method: str,
    default: Callable[[], R],
    names: Mapping[str, Callable[[], R]] | None = None,
    wrap: Callable[[object], R] | None = None,
) -> R:
    """The backend a kwarg names.

    Args:
        value: the kwarg: None (the embedded default), a registered name, an object with the role's
            method (used as it is), or a bare `ChatModel` (wrapped by ``wrap``, the role's ``Model*`` class).
        role: the kwarg's name, for error messages (``"user"``, ``"tts"``).
        method: the role protocol's one method (``"reply"``, ``"synthesize"``).
        default: builds the embedded default.
        names: string name -> builder, for roles with named implementations (``"bm25"``, ``"piper"``).
        wrap: builds the role's model-backed implementation from a `ChatModel`; None when the role has none.

    Returns:
        The backend.

    Raises:
        ValueError: an unknown name, or an object that is neither the role nor a ChatModel.

    >>> class Echo:
    ...     def chat(self, messages, *, seed=None, max_tokens=512, temperature=0.0):
    ...         return "hi"
    >>> resolve_backend(None, role="x", method="go", default=lambda: "dflt")
    'dflt'
    >>> resolve_backend("b", role="x", method="go", default=str, names={"b": lambda: "named"})
    'named'
    >>> resolve_backend(Echo(), role="x", method="go", default=str, wrap=lambda m: ("wrapped", m.chat([])))
    ('wrapped', 'hi')
    """
    names = names or {}
    if value is None:
        return default()
    if isinstance(value, str):
        if value not in names:
            choices = sorted(names) or "no names"
            raise ValueError(
                f"unknown {role} {value!r}; choose one of {choices} or pass an object with {method}()"
            )
        return names[value]()
    if callable(getattr(value, method, None)):
        return value  # type: ignore[return-value]  # duck-typed: it has the role's method
    if wrap is not None and callable(getattr(value, "chat", None)):
        return wrap(value)
    accepted = "a ChatModel, " if wrap is not None else ""
    raise ValueError(
        f"{role} must be None, a name in {sorted(names)}, {accepted}or have {method}(); got {value!r}"
    )


__all__ = ["resolve_backend"]
