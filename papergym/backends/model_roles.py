"""The model-backed roles: `ModelJudge`, `ModelCritic`, `ModelReader`, `ModelUser`, `ModelAnnotator`.

Each takes any `ChatModel` and implements one role protocol of `papergym.backends.protocols`.
The prompts are constructor arguments: a system prompt and a ``str.format`` template whose fields
are the method's inputs (a literal brace in a template is written ``{{`` / ``}}``). The defaults
here are generic; an env issue supplies the prompts its paper used. Seeds pass through to the
model, so a seeded run replays exactly (and hits a replay cache).
"""

from __future__ import annotations

import copy
import json
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeVar

from papergym.backends.protocols import ChatModel, Message
from papergym.core.errors import BackendError

logger = logging.getLogger(__name__)

_U = TypeVar("_U", bound="ModelUser")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def render_dialogue(messages: Sequence[Message]) -> str:
    """A conversation as plain text, one ``[role] content`` block per message."""
    return "\n".join(f"[{m['role']}] {m['content']}" for m in messages)


class ModelRole:
    """The shared base: a system prompt, a template, and one call to the model.

    Args:
        model: any `ChatModel`.
        system_prompt: the system message (``None``: the role's default; ``""``: none).
        template: the user message, formatted with the method's inputs (``None``: the default).
        max_tokens: the most tokens of a reply (``None``: the role's default).
        temperature: the sampling temperature (0: greedy, the default for graders).
    """

    DEFAULT_SYSTEM: ClassVar[str] = ""
    DEFAULT_TEMPLATE: ClassVar[str] = ""
    DEFAULT_MAX_TOKENS: ClassVar[int] = 512

    def __init__(
        self,
        model: ChatModel,
        *,
        system_prompt: str | None = None,
        template: str | None = None,
        max_tokens: int | None = None,
        temperature: float = 0.0,
    ) -> None:
        max_tokens = self.DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens
        if max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.model = model
        self.system_prompt = self.DEFAULT_SYSTEM if system_prompt is None else system_prompt
        self.template = self.DEFAULT_TEMPLATE if template is None else template
        self.max_tokens = int(max_tokens)
        self.temperature = float(temperature)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"

    def _messages(self, dialogue: Sequence[Message]) -> list[Message]:
        system: list[Message] = (
            [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        )
        return [*system, *dialogue]

    def _send(self, dialogue: Sequence[Message], seed: int | None) -> str:
        return self.model.chat(
            self._messages(dialogue), seed=seed, max_tokens=self.max_tokens, temperature=self.temperature
        )

    def _ask(self, seed: int | None, **fields: Any) -> str:
        """Format the template with ``fields`` and send it as the user message."""
        return self._send([{"role": "user", "content": self.template.format(**fields)}], seed)


class ModelJudge(ModelRole):
    """`Judge` by a model: a score in [0, 1].

    The score is the first number in the reply that lies in [0, 1] (``"0.8"``, ``"Score: 1"``); a
    reply with no such number scores 0.0 and is logged at WARNING, since a grader that cannot be
    read must not reward. Template fields: ``{prompt}``, ``{response}``, ``{criterion}``.
    """

    DEFAULT_SYSTEM = "You are a strict, fair grader. You answer with a single number between 0 and 1."
    DEFAULT_TEMPLATE = (
        "Grade how well the response meets the criterion.\n\n"
        "Criterion: {criterion}\n\nPrompt:\n{prompt}\n\nResponse:\n{response}\n\n"
        "Reply with one number between 0 (not at all) and 1 (fully), and nothing else."
    )
    DEFAULT_CRITERION: ClassVar[str] = "the response answers the prompt correctly and completely"
    DEFAULT_MAX_TOKENS = 32

    def score(self, prompt: str, response: str, *, criterion: str = "", seed: int | None = None) -> float:
        reply = self._ask(
            seed, prompt=prompt, response=response, criterion=criterion or self.DEFAULT_CRITERION
        )
        value = parse_score(reply)
        if value is None:
            logger.warning("%r: no score in [0, 1] in the reply %r; scoring 0.0", self, reply[:200])
            return 0.0
        return value


def parse_score(reply: str) -> float | None:
    """The first number in ``reply`` that lies in [0, 1], or None.

    >>> parse_score("Score: 0.75 / 1"), parse_score("7/10"), parse_score("none")
    (0.75, None, None)
    """
    for match in _NUMBER.finditer(reply):
        value = float(match.group())
        if 0.0 <= value <= 1.0:
            return value
    return None


class ModelCritic(ModelRole):
    """`Critic` by a model: feedback on the agent's trajectory so far.

    Template fields: ``{question}`` and ``{trajectory}`` (rendered by `render_dialogue`).
    """

    DEFAULT_SYSTEM = (
        "You are a critic who helps an agent improve. Be specific and brief; do not solve the task."
    )
    DEFAULT_TEMPLATE = (
        "The agent is working on:\n{question}\n\nIts trajectory so far:\n{trajectory}\n\n"
        "Point out its most important mistake or missing step, in at most three sentences."
    )

    def feedback(self, question: str, trajectory: Sequence[Message], *, seed: int | None = None) -> str:
        return self._ask(seed, question=question, trajectory=render_dialogue(trajectory)).strip()


class ModelReader(ModelRole):
    """`Reader` by a model: answers a question from a text. Template fields: ``{question}``, ``{context}``."""

    DEFAULT_SYSTEM = (
        "You answer questions using only the given text. If the text does not say, reply: unknown."
    )
    DEFAULT_TEMPLATE = "Text:\n{context}\n\nQuestion: {question}\n\nAnswer briefly."

    def answer(self, question: str, context: str, *, seed: int | None = None) -> str:
        return self._ask(seed, question=question, context=context).strip()


USER_GUIDELINES = """\
You play a customer who contacts a company's customer service agent. Follow the scenario below.
- Write only your next message to the agent, in the first person, short and natural.
- Reveal information a little at a time, only when the agent needs it. Never invent facts that are not
  in the scenario: if the agent asks for something you were not given, say you do not know it.
- Do not repeat the scenario word for word. Stay in character; you are not an AI assistant.
- When your goals are met, or cannot be met, write only ###STOP###. If the agent transfers you to a
  human agent, write only ###TRANSFER###. If the scenario does not say what to do next, write only
  ###OUT-OF-SCOPE###.
"""
"""`ModelUser`'s default system prompt: tau2-bench's user-simulator guidelines in our words (envs.md §2.2)."""


class ModelUser(ModelRole):
    """`UserSimulator` (and `TaskBoundUser`) by a model that plays the user, prompted tau2-style.

    The dialogue is role-swapped (the agent's messages become ``user``, the user's become
    ``assistant``; the agent's system messages are dropped), so the model speaks as the user. The
    system prompt is the user's guidelines (default `USER_GUIDELINES`); bound to a task by `for_task`
    (the service env binds at every reset, so one instance serves every task), the task's scenario
    follows it as ``<scenario>...</scenario>`` (the task's ``scenario_text()``). The template is the
    opening cue sent when the swapped dialogue would not start with a ``user`` message (e.g. when the
    user speaks first).

    Args: as `ModelRole`.

    Attributes:
        task: the task played (anything with ``scenario_text()``), set by `for_task`; None: unbound.
    """

    DEFAULT_SYSTEM = USER_GUIDELINES
    DEFAULT_TEMPLATE = "(The conversation starts. Write your first message to the agent.)"
    DEFAULT_MAX_TOKENS = 256
    task: Any = None

    def for_task(self: _U, task: Any) -> _U:
        """A copy of this user bound to ``task`` (the model is shared)."""
        bound = copy.copy(self)
        bound.task = task
        return bound

    def __deepcopy__(self: _U, memo: dict[int, Any]) -> _U:
        return self  # holds a model (shared) and is immutable once bound

    def _messages(self, dialogue: Sequence[Message]) -> list[Message]:
        if self.task is None:
            return super()._messages(dialogue)
        system = f"{self.system_prompt}\n<scenario>\n{self.task.scenario_text()}\n</scenario>"
        return [{"role": "system", "content": system}, *dialogue]

    def reply(self, messages: Sequence[Message], *, seed: int | None = None) -> str:
        swap = {"user": "assistant", "assistant": "user"}
        dialogue: list[Message] = [
            {"role": swap[m["role"]], "content": m["content"]} for m in messages if m["role"] in swap
        ]
        if not dialogue or dialogue[0]["role"] != "user":
            dialogue.insert(0, {"role": "user", "content": self.template})
        return self._send(dialogue, seed).strip()


class ModelAnnotator(ModelRole):
    """`Annotator` by a model: one JSON object per step of a finished trajectory.

    The reply must hold a JSON list of objects (code fences and text around it are ignored);
    anything else raises ``BackendError(retryable=False)``, since labels cannot be guessed.
    Template field: ``{trajectory}`` (rendered by `render_dialogue`).
    """

    DEFAULT_SYSTEM = "You annotate agent trajectories. You reply with JSON only."
    DEFAULT_TEMPLATE = (
        "Trajectory:\n{trajectory}\n\nFor each assistant message, in order, give an object "
        '{{"step": <index from 0>, "influential": <true if it changed the outcome>, '
        '"reason": <short text>}}. '
        "Reply with a JSON list of these objects."
    )

    def annotate(
        self, trajectory: Sequence[Message], *, seed: int | None = None
    ) -> Sequence[Mapping[str, Any]]:
        reply = self._ask(seed, trajectory=render_dialogue(trajectory))
        return parse_json_list(reply, source=repr(self))


def parse_json_list(reply: str, *, source: str = "model") -> list[dict[str, Any]]:
    """The JSON list of objects in ``reply`` (from its first ``[`` to its last ``]``).

    Raises:
        BackendError: (not retryable) no such list, or an element is not an object.

    >>> parse_json_list('Sure: ```json\\n[{"step": 0}]\\n```')
    [{'step': 0}]
    """
    start, end = reply.find("["), reply.rfind("]")
    try:
        if start < 0 or end < start:
            raise ValueError("no JSON list")
        value = json.loads(reply[start : end + 1])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise ValueError("not a list of objects")
    except ValueError as exc:
        raise BackendError(
            f"{source}: expected a JSON list of objects, got {reply[:200]!r} ({exc})", retryable=False
        ) from exc
    return value
