"""The installed apps. `make_apps` returns a fresh registry (apps hold no state: the `PhoneState` does)."""

from __future__ import annotations

from papergym.envs.mobile_gui.apps.base import Field, RecordApp
from papergym.envs.mobile_gui.apps.messaging import MusicApp, SmsApp
from papergym.envs.mobile_gui.apps.records import (
    CalendarApp,
    ContactsApp,
    ExpensesApp,
    FilesApp,
    JoplinApp,
    MarkorApp,
    RecipesApp,
    SportsTrackerApp,
    TasksApp,
)
from papergym.envs.mobile_gui.apps.system import ClockApp, HomeApp, RecorderApp, SettingsApp
from papergym.envs.mobile_gui.phone import App

APP_CLASSES = (
    SettingsApp,
    ClockApp,
    ContactsApp,
    SmsApp,
    CalendarApp,
    MarkorApp,
    JoplinApp,
    TasksApp,
    ExpensesApp,
    RecipesApp,
    FilesApp,
    RecorderApp,
    MusicApp,
    SportsTrackerApp,
)


def make_apps() -> dict[str, App]:
    """Every app by key, the home screen first."""
    apps: dict[str, App] = {}
    for cls in APP_CLASSES:
        app = cls()
        apps[app.key] = app
    labels = {k: a.label for k, a in apps.items()}
    return {"home": HomeApp(labels), **apps}


__all__ = ["APP_CLASSES", "Field", "RecordApp", "make_apps"]
