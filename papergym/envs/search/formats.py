"""SearchCritic-v0's two action formats: CAFE's (tool calls, plans, feedback requests) and Search-R1's tags.

The prompts, the search tool's schema and the patterns the env parses actions with; the env itself
(`papergym.envs.search.search_critic_env`) holds the episode logic.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

FORMATS: tuple[str, ...] = ("cafe", "search_r1")
"""The action formats: CAFE's (default) and Search-R1's."""
SEARCH_TOOL = {
    "name": "search",
    "description": "Search the encyclopedia. Returns the top passages for each query.",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "array", "items": {"type": "string"}, "description": "queries"}},
        "required": ["query"],
    },
}
CAFE_PROMPT = (
    "You are a Deep Research AI Assistant. Answer the user's question using a search engine over a local "
    "encyclopedia. First write your plan inside <plan></plan>. Then each of your turns is exactly one of:\n"
    "- <think>...</think><plan>...</plan> together with one of the actions below;\n"
    "- <think>...</think><tool_call>"
    '{{"name": "search", "arguments": {{"query": ["...", "..."]}}}}</tool_call>: '
    "the top results of each query come back inside <information></information>;\n"
    "- <think>...</think><request_feedback></request_feedback>: ask a critic for feedback on your "
    "trajectory; do so when you are stuck, repetitive, failing to find useful evidence, or have low "
    "confidence. You may request feedback {budget} time(s); it comes back inside <feedback></feedback>;\n"
    "- <think>...</think><answer>short answer only</answer> (yes or no for a yes/no question).\n"
    "You may make at most {max_calls} tool calls.\n\nTools:\n{tools}"
)
SEARCH_R1_PROMPT = (
    "Answer the given question. You must conduct reasoning inside <think> and </think> first every time you "
    "get new information. After reasoning, if you find you lack some knowledge, you can call a search engine "
    "by <search> query </search> and it will return the top searched results between <information> and "
    "</information>. You can search as many times as your want. If you find no further external knowledge "
    "needed, you can directly provide the answer inside <answer> and </answer>, without detailed "
    "illustrations. For example, <answer> Beijing </answer>."
)
SEARCH_R1_INVALID = (
    "My previous action is invalid. If I want to search, I should put the query between <search> and "
    "</search>. If I want to give the final answer, I should put the answer between <answer> and </answer>. "
    "Let me try again."
)
NOTE = re.compile(r"<(plan|think)>(.*?)</\1>", re.DOTALL)
R1_ACTION = re.compile(r"<(search|answer)>(.*?)</\1>", re.DOTALL)
FEEDBACK = re.compile(r"<feedback>(.*?)</feedback>", re.DOTALL)
REQUEST = "<request_feedback>"


def search_action(queries: Sequence[str]) -> str:
    """A CAFE-format search call for ``queries``."""
    return f"<tool_call>{json.dumps({'name': 'search', 'arguments': {'query': list(queries)}})}</tool_call>"
