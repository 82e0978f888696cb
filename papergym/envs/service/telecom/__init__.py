"""The telecom domain: tau2's carrier schema and tools, the user's own phone, generated tasks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from papergym.backends.protocols import ChatModel
from papergym.envs.service.domain import Domain, Template
from papergym.envs.service.tasks import ServiceTask
from papergym.envs.service.telecom.data import TelecomWorld, generate_telecom_db, load_telecom_toml
from papergym.envs.service.telecom.policy import TELECOM_POLICY
from papergym.envs.service.telecom.templates import TEMPLATES
from papergym.envs.service.telecom.tools import TelecomTools
from papergym.envs.service.telecom.user import DeviceModelUser, TelecomUser


@dataclass
class TelecomDomain(Domain):
    """tau2's telecom domain (dual control: the agent's `TelecomTools`, the user's phone tools).

    tau2 data folders hold ``db.toml``, ``user_db.toml``, ``tasks.json``, ``split_tasks.json`` and
    ``main_policy.md`` (with ``tech_support_manual.md`` appended when present, as tau2 does).
    """

    name: str = "telecom"
    toolkit: type[TelecomTools] = TelecomTools
    policy: str = TELECOM_POLICY
    templates: tuple[Template, ...] = field(default=TEMPLATES)
    tau2_files: ClassVar[tuple[str, ...]] = ("db.toml", "main_policy.md")

    def generate_db(self, seed: int) -> dict[str, Any]:
        return generate_telecom_db(seed)

    def world(self, db: Mapping[str, Any]) -> TelecomWorld:
        return TelecomWorld.build(db)

    def load_tau2_db(self, folder: Path) -> dict[str, Any]:
        return load_telecom_toml(folder)

    def load_tau2_policy(self, folder: Path) -> str:
        main = (folder / "main_policy.md").read_text(encoding="utf-8")
        manual = folder / "tech_support_manual.md"
        if not manual.is_file():
            return main
        tech = manual.read_text(encoding="utf-8")
        return f"<main_policy>\n{main}\n</main_policy>\n<tech_support_policy>\n{tech}\n</tech_support_policy>"

    def scripted_user(self, task: ServiceTask) -> TelecomUser:
        return TelecomUser(task, None, TelecomTools.USER)

    def user_action_request(self, name: str, arguments: Mapping[str, Any]) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in arguments.items())
        return f"Please do this on your phone: {name}({args})."

    def model_user(self, model: ChatModel) -> DeviceModelUser:
        return DeviceModelUser(model)  # the user operates their own phone


__all__ = ["TelecomDomain", "TelecomTools", "TelecomUser"]
