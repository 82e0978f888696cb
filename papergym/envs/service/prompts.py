"""What ServiceAgent-v0's first observation says: tau2's full agent prompt or the compact one."""

from __future__ import annotations

import json
from functools import cache
from typing import Any, Literal

from papergym.envs.service.domains import get_domain

AGENT_INSTRUCTIONS = (
    "You are a customer service agent that helps the user according to the <policy> below. In each turn "
    "you either send a message to the user or make one tool call, never both. To call a tool, write only "
    '<tool_call>{"name": ..., "arguments": {...}}</tool_call>. The user ends the conversation.'
)
"""tau2's agent prompt, in papergym's words."""
COMPACT_INSTRUCTIONS = (
    "You are a customer service agent. In each turn you either send a message to the user or make one tool "
    'call, never both. To call a tool, write only <tool_call>{"name": ..., "arguments": {...}}</tool_call>. '
    "The user ends the conversation."
)
"""The agent prompt of ``prompt="compact"`` (no policy section to refer to)."""
PromptMode = Literal["full", "compact"]
"""What the first observation holds: tau2's full prompt, or the compact one of small-context models."""


@cache
def tool_schemas(domain_name: str) -> tuple[dict[str, Any], ...]:
    """The JSON schemas of the domain's agent tools (built once per process)."""
    return tuple(t.schema() for t in get_domain(domain_name).toolkit.tools().values())


@cache
def full_prompt(domain_name: str, policy: str) -> str:
    """tau2's layout: the instructions, the policy and the tools' JSON schemas."""
    # built once: json.dumps with indent runs the pure-python encoder (milliseconds per call)
    tools = json.dumps(list(tool_schemas(domain_name)), indent=1)
    return (
        f"<instructions>\n{AGENT_INSTRUCTIONS}\n</instructions>\n<policy>\n{policy}\n</policy>\n"
        f"<tools>\n{tools}\n</tools>"
    )


@cache
def compact_prompt(domain_name: str) -> str:
    """``prompt="compact"``: the instructions and one line per tool, ``name(required, optional?)``."""
    # one line per tool: its name and argument names (required ones first), no descriptions or types
    lines = []
    for schema in tool_schemas(domain_name):
        function = schema["function"]
        parameters = function.get("parameters", {})
        required = list(parameters.get("required", ()))
        optional = [k for k in parameters.get("properties", {}) if k not in required]
        arguments = [*required, *(f"{k}?" for k in optional)]
        lines.append(f"{function['name']}({', '.join(arguments)})")
    tools = "\n".join(lines)
    return f"<instructions>\n{COMPACT_INSTRUCTIONS}\n</instructions>\n<tools>\n{tools}\n</tools>"
