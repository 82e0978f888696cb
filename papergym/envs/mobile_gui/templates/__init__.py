"""AndroidWorld task templates on papergym's apps; importing this package registers them all.

`REGISTRY` maps each AndroidWorld template name to its `Template`. Modules: `system` (settings, clock,
recorder, clipboard), and the app families listed in `MODULES`.
"""

from __future__ import annotations

import importlib

from papergym.envs.mobile_gui.templates.base import REGISTRY, Template, budget

MODULES = ("system", "records", "calendar", "notes", "tasks_sports", "messaging")
for _module in MODULES:
    importlib.import_module(f"papergym.envs.mobile_gui.templates.{_module}")

__all__ = ["MODULES", "REGISTRY", "Template", "budget"]
