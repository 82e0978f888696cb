"""The env contract: spaces, the TextEnv base class, tools, tasks, trajectories, info keys, errors.

This subpackage imports nothing else from papergym. Its public names load lazily on first access.
"""

from __future__ import annotations

from papergym.core.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(
        ("Step", "Trajectory", "Policy", "OraclePolicy", "RandomPolicy", "rollout", "rollout_group"),
        "papergym.core.trajectory",
    ),
    **dict.fromkeys(("TextEnv", "Turn"), "papergym.core.text_env"),
    **dict.fromkeys(("PapergymError", "DependencyNotInstalled", "BackendError"), "papergym.core.errors"),
    **dict.fromkeys(("FreeText", "Chat", "Waveform"), "papergym.core.spaces"),
    "Tool": "papergym.core.tools",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)
