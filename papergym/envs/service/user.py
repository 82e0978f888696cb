"""User simulators of the service env, behind `UserSimulator.reply(messages, *, seed)`.

``messages`` is the text conversation from the agent's side (``user`` = the customer, ``assistant`` =
the agent; tool traffic is not shown to the user, as in tau2). A simulator may also offer
``for_task(task)`` (`papergym.backends.protocols.TaskBoundUser`), returning a copy bound to the task's
scenario; the env calls it at every reset, so one instance serves every task. A reply containing a stop
token ends the conversation. Model-played users are `papergym.backends.ModelUser` (a bare ChatModel passed
as ``user=`` becomes one); this module holds the deterministic `ScriptedUser` and the stop tokens.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from papergym.backends.protocols import Message
from papergym.envs.service.tasks import ServiceTask, UserScript

STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
GIVE_UP = "###GIVE-UP###"
"""The scripted user's end token when it could not understand the agent: the episode scores 0."""
STOP_TOKENS: tuple[str, ...] = (STOP, TRANSFER, OUT_OF_SCOPE, GIVE_UP)
"""tau2's user-simulator end tokens (envs.md §2.2), and papergym's give-up token."""
MAX_CONFUSIONS = 2
"""Agent messages in a row the scripted user asks again about before giving up (inferred)."""
ASK_AGAIN = "Sorry, I don't understand what you mean. Could you say that again?"
COMMON_WORDS: frozenset[str] = frozenset(
    [
        "a",
        "an",
        "the",
        "i",
        "you",
        "your",
        "we",
        "our",
        "my",
        "me",
        "it",
        "its",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "has",
        "have",
        "had",
        "will",
        "would",
        "can",
        "could",
        "do",
        "does",
        "did",
        "not",
        "no",
        "yes",
        "to",
        "of",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "and",
        "or",
        "but",
        "this",
        "that",
        "these",
        "those",
        "there",
        "here",
        "please",
        "sorry",
        "thank",
        "thanks",
        "sure",
        "okay",
        "ok",
        "done",
        "now",
        "what",
        "which",
        "when",
        "how",
        "order",
        "orders",
        "flight",
        "reservation",
        "item",
        "items",
        "account",
        "user",
        "payment",
        "refund",
        "status",
        "help",
    ]
)
"""Words one of which an agent message must hold for the scripted user to understand it (inferred:
a garbage or bare-token message is not an answer a customer can act on)."""
_WORD = re.compile(r"[a-z']+")
ASKED_TOPICS: tuple[str, ...] = ("email", "first name", "last name", "zip code", "order id", "user id")
"""Topics the scripted user recognises in a question even when it does not know the answer."""
NOT_SURE = "I'm not sure, sorry."
_TRANSFERRED = re.compile(r"transferr(ed|ing) (you )?to a human agent", re.IGNORECASE)


def understood(text: str) -> bool:
    """Whether the scripted user understands an agent message (it holds one of `COMMON_WORDS`)."""
    return any(w in COMMON_WORDS for w in _WORD.findall(text.lower()))


def _tail(items: Sequence[str], value: str) -> int:
    """How many of the last items equal ``value``, in a row."""
    n = 0
    for item in reversed(items):
        if item != value:
            break
        n += 1
    return n


def stop_token(text: str) -> str | None:
    """The first stop token in ``text``, or None."""
    for token in STOP_TOKENS:
        if token in text:
            return token
    return None


class ScriptedUser:
    """The deterministic default user.

    It opens with the reason for the call; answers a question with the facts whose topic the question
    names ("My email is ..."), saying it does not know the others; agrees (or, if scripted, declines)
    when asked to confirm; after a statement it makes its next request, or ends with its stop token;
    it answers a transfer with ``###TRANSFER###``, and a second question in a row that its scenario does
    not cover with ``###OUT-OF-SCOPE###``. For a loaded tau2 task (no script) it answers any question
    with its known info. A message it cannot understand (none of `COMMON_WORDS`, e.g. garbage or a bare
    stop token) it answers by asking again; after ``max_confusions`` such messages in a row it gives up
    with ``###GIVE-UP###`` (the env scores the episode 0).

    Args:
        task: the task to play; None for an unbound instance (the env binds it with `for_task`).
        max_confusions: the bound on asking again (inferred, `MAX_CONFUSIONS`).
    """

    def __init__(self, task: ServiceTask | None = None, *, max_confusions: int = MAX_CONFUSIONS) -> None:
        if max_confusions < 0:
            raise ValueError(f"max_confusions must be >= 0, got {max_confusions}")
        self.task = task
        self.max_confusions = int(max_confusions)

    def for_task(self, task: ServiceTask) -> ScriptedUser:
        from papergym.envs.service.domains import DOMAINS, get_domain  # domains import this module's users

        own = get_domain(task.domain).scripted_user(task) if task.domain in DOMAINS else None
        if own is None:
            return ScriptedUser(task, max_confusions=self.max_confusions)
        own.max_confusions = self.max_confusions
        return own

    def __repr__(self) -> str:
        return f"ScriptedUser({self.task.id if self.task else 'unbound'})"

    def reply(self, messages: Sequence[Message], *, seed: int | None = None) -> str:
        del seed  # deterministic
        if self.task is None:
            raise ValueError("ScriptedUser needs a task: build it with ScriptedUser(task) or for_task(task)")
        script = self.task.script or UserScript()
        agent = [m["content"] for m in messages if m["role"] == "assistant"]
        if not agent:
            return self.task.reason_for_call
        last = agent[-1]
        low = last.lower()
        if _TRANSFERRED.search(last):
            return TRANSFER
        if not understood(last):
            previous = [m["content"] for m in messages if m["role"] == "user"]
            if _tail(previous, ASK_AGAIN) < self.max_confusions:
                return ASK_AGAIN
            return f"I give up. {GIVE_UP}"

        if "?" in last:
            if "(yes/no)" in low or "confirm" in low:
                return (
                    "Yes, please go ahead." if script.confirm else f"No, please do not do that. {script.stop}"
                )
            answers = [f"My {topic} is {value}." for topic, value in script.facts.items() if topic in low]
            answers += [f"I don't know my {t}." for t in ASKED_TOPICS if t in low and t not in script.facts]
            if answers:
                return " ".join(answers)
            if self.task.script is None:
                known = getattr(self.task.instructions, "known_info", None)
                if known:
                    return known
            previous = [m["content"] for m in messages if m["role"] == "user"]
            if previous and previous[-1] == NOT_SURE:  # asked twice for what the scenario does not cover
                return OUT_OF_SCOPE
            return NOT_SURE
        said = {m["content"] for m in messages if m["role"] == "user"}
        pending = [r for r in script.requests if r not in said]
        if pending:
            return pending[0]
        return f"Thank you, that's all I needed. {script.stop}"


__all__ = ["GIVE_UP", "STOP_TOKENS", "ScriptedUser", "stop_token"]
