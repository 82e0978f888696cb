"""The telecom `ScriptedUser`: does the device actions the agent asks for and reports what the phone shows.

The env attaches the user's phone (`attach_device`): a function running one of the user's own tools
(`DeviceTools.USER`) on the episode's database. When the agent's message asks for device actions, in
plain words ("toggle airplane mode", "run a speed test", "set your network mode to 4g_only", "grant
the messaging app the storage permission", ...) or by tool name (``toggle_data()``), the user performs
them in the order written and replies with each result. Any other message is answered as by the
generic `ScriptedUser` (facts, confirmations, follow-up requests, the stop token).
"""

from __future__ import annotations

import ast
import copy
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from papergym.backends.model_roles import USER_GUIDELINES, ModelUser
from papergym.backends.protocols import ChatModel, Message
from papergym.core.tool_calls import parse_tool_calls
from papergym.envs.service.tasks import ServiceTask
from papergym.envs.service.user import ScriptedUser

DeviceCall = Callable[[str, Mapping[str, Any]], str]
_WIFI = r"wi-?fi"
PHRASES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        r"set (?:your |the )?(?:preferred )?network mode(?: preference)? to (\w+)",
        "set_network_mode_preference",
        ("mode",),
    ),
    (
        r"grant (?:the )?(\w+) app (?:the )?(\w+) permission",
        "grant_app_permission",
        ("app_name", "permission"),
    ),
    (r"check (?:the )?(\w+) app(?:'s)? permissions", "check_app_permissions", ("app_name",)),
    (r"check (?:the )?(\w+) app(?:'s)? status", "check_app_status", ("app_name",)),
    (r"check (?:your |the |which )?(?:installed apps|apps are installed)", "check_installed_apps", ()),
    (r"(?:toggle|turn (?:on|off)) (?:the )?airplane mode", "toggle_airplane_mode", ()),
    (r"check (?:your |the )?status bar", "check_status_bar", ()),
    (r"check (?:your |the )?network status", "check_network_status", ()),
    (r"check (?:your |the )?network mode", "check_network_mode_preference", ()),
    (r"(?:run|do) (?:a |the )?speed test", "run_speed_test", ()),
    (r"check (?:your |the )?sim", "check_sim_status", ()),
    (r"re-?seat (?:your |the )?sim", "reseat_sim_card", ()),
    (r"(?:toggle|turn (?:on|off)) (?:your |the )?mobile data", "toggle_data", ()),
    (r"(?:toggle|turn (?:on|off)) (?:your |the )?data roaming", "toggle_roaming", ()),
    (r"(?:toggle|turn (?:on|off)) (?:your |the )?data saver", "toggle_data_saver_mode", ()),
    (r"check (?:your |the )?data (?:saver|restriction)", "check_data_restriction_status", ()),
    (r"check (?:your |the )?apn", "check_apn_settings", ()),
    (r"reset (?:your |the )?apn", "reset_apn_settings", ()),
    (rf"(?:toggle|turn (?:on|off)) (?:your |the )?{_WIFI} calling", "toggle_wifi_calling", ()),
    (rf"check (?:your |the )?{_WIFI} calling", "check_wifi_calling_status", ()),
    (rf"(?:toggle|turn (?:on|off)) (?:your |the )?{_WIFI}(?! calling)", "toggle_wifi", ()),
    (rf"check (?:your |the )?{_WIFI}(?! calling)", "check_wifi_status", ()),
    (r"disconnect (?:your |the )?vpn", "disconnect_vpn", ()),
    (r"(?<!dis)connect (?:to )?(?:your |the )?vpn", "connect_vpn", ()),
    (r"check (?:your |the )?vpn", "check_vpn_status", ()),
    (r"(?:try to )?send an? (?:mms|picture message)", "can_send_mms", ()),
    (r"(?:reboot|restart) (?:your |the )?(?:phone|device)", "reboot_device", ()),
    (r"check (?:for )?(?:a |the |your )?payment request", "check_payment_request", ()),
    (r"(?:make|complete) the payment", "make_payment", ()),
)
"""Device requests in words: (pattern, tool, names of the pattern's groups as arguments)."""
_COMPILED = tuple((re.compile(p, re.IGNORECASE), tool, names) for p, tool, names in PHRASES)


def _by_name(text: str, names: Sequence[str]) -> list[tuple[int, str, dict[str, Any]]]:
    found = []
    for match in re.finditer(r"\b([a-z_]+)\(([^()]*)\)", text):
        if match.group(1) not in names:
            continue
        try:
            call = ast.parse(f"f({match.group(2)})", mode="eval").body
            args = {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}  # type: ignore[attr-defined]
        except (SyntaxError, ValueError):
            continue
        found.append((match.start(), match.group(1), args))
    return found


def device_requests(text: str, tool_names: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """The device actions a message asks for, in the order written (tool names first, else phrases).

    >>> device_requests("Please toggle airplane mode, then run a speed test.", ["toggle_airplane_mode"])
    [('toggle_airplane_mode', {}), ('run_speed_test', {})]
    """
    found = _by_name(text, tool_names)
    if not found:
        for pattern, tool, names in _COMPILED:
            for match in pattern.finditer(text):
                args = {n: match.group(i + 1).lower() for i, n in enumerate(names)}
                found.append((match.start(), tool, args))
    return [(tool, args) for _, tool, args in sorted(found, key=lambda f: f[0])]


class TelecomUser(ScriptedUser):
    """The scripted telecom user (see the module docstring).

    Args:
        task: the task to play.
        device: the function running the user's own tools (attached by the env).
        tool_names: the user's tool names.
    """

    def __init__(
        self,
        task: ServiceTask | None = None,
        device: DeviceCall | None = None,
        tool_names: Sequence[str] = (),
    ) -> None:
        super().__init__(task)
        self.device = device
        self.tool_names = tuple(tool_names)

    def for_task(self, task: ServiceTask) -> TelecomUser:
        return TelecomUser(task, None, self.tool_names)

    def attach_device(self, device: DeviceCall) -> None:
        """Give the user their phone (called by the env at every reset and restore)."""
        self.device = device

    def reply(self, messages: Sequence[Message], *, seed: int | None = None) -> str:
        agent = [m["content"] for m in messages if m["role"] == "assistant"]
        if agent and self.device is not None:
            requests = device_requests(agent[-1], self.tool_names)
            if requests:
                results = [self.device(tool, args) for tool, args in requests]
                return "Okay, I did that on my phone. " + " ".join(r.replace("\n", "; ") for r in results)
        return super().reply(messages, seed=seed)


DEVICE_GUIDELINES = """
You have your own phone. To act on it or look at it, write only one or more tool calls, each as
<tool_call>{{"name": ..., "arguments": {{...}}}}</tool_call>; you then see what the phone shows and write your
next message. Use only these phone tools, and never make up what the phone shows:
{tools}
"""
"""Added to the user guidelines of `DeviceModelUser` (the phone's tool schemas fill ``{tools}``)."""


class DeviceModelUser(ModelUser):
    """A `ModelUser` (any ChatModel) that operates its own phone through the user's tools, as tau2's user LLM.

    The phone's tool schemas are added to the user prompt (`DEVICE_GUIDELINES`). When a reply holds tool
    calls, they run on the phone (`attach_device`, done by the env), the results are shown to the model as
    ``[your phone]`` messages and it is asked again, up to ``max_rounds`` times; the first reply without
    tool calls goes to the agent.

    Args:
        model: the chat model.
        max_rounds: the most phone rounds per reply.
        system_prompt, template, max_tokens, temperature: as `ModelUser` (the phone's tools are
            appended to the system prompt).
    """

    def __init__(
        self,
        model: ChatModel,
        *,
        system_prompt: str = USER_GUIDELINES,
        template: str | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
        max_rounds: int = 5,
    ) -> None:
        from papergym.envs.service.telecom.tools import TelecomTools  # tools import this module's package

        tools = json.dumps([t.schema() for t in TelecomTools.user_tools().values()])
        super().__init__(
            model,
            system_prompt=system_prompt + DEVICE_GUIDELINES.format(tools=tools),
            template=template,
            max_tokens=max_tokens,
            temperature=temperature,
        )
        self.max_rounds = int(max_rounds)
        self.device: DeviceCall | None = None

    def attach_device(self, device: DeviceCall) -> None:
        """Give the user their phone (called by the env at every reset and restore)."""
        self.device = device

    def __deepcopy__(self, memo: dict[int, Any]) -> DeviceModelUser:
        new = copy.copy(self)  # the model is shared, the phone copied
        new.device = copy.deepcopy(self.device, memo)
        return new

    def reply(self, messages: Sequence[Message], *, seed: int | None = None) -> str:
        extra: list[Message] = []
        text = ""
        for _ in range(self.max_rounds + 1):
            text = super().reply([*messages, *extra], seed=seed)
            parsed = parse_tool_calls(text)
            if self.device is None or not parsed.ok or not parsed.calls:
                return text
            shown = [f"{c.name}: {self.device(c.name, dict(c.arguments))}" for c in parsed.calls]
            extra += [
                {"role": "user", "content": text},
                {"role": "assistant", "content": "[your phone] " + "\n".join(shown)},
            ]
        return text
