"""The one-method Protocols behind which every model in the loop sits.

Each role has an embedded offline implementation (in `papergym.backends.scripted` or its env's
package) and a model-backed one that takes any `ChatModel`. Every method takes a keyword-only
``seed`` so a run replays exactly; inputs and outputs are plain data. A backend that fails after
its bounded retries raises `papergym.core.errors.BackendError`; envs turn it into
``truncated=True`` and ``info["error"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypedDict, runtime_checkable

import numpy as np


class Message(TypedDict):
    """A chat message in the OpenAI format."""

    role: str
    content: str


@runtime_checkable
class ChatModel(Protocol):
    """A chat LLM: local checkpoint, OpenAI-compatible server, or scripted stand-in."""

    def chat(
        self,
        messages: Sequence[Message],
        *,
        seed: int | None = None,
        max_tokens: int = 512,
        temperature: float = 0.0,
    ) -> str: ...


@runtime_checkable
class WorldModel(Protocol):
    """Predicts the next state after an action. States are opaque and never mutated in place."""

    def predict(self, state: Any, action: str, *, seed: int | None = None) -> Any: ...


@runtime_checkable
class UserSimulator(Protocol):
    """The simulated user of a conversation: the next user message given the dialogue so far."""

    def reply(self, messages: Sequence[Message], *, seed: int | None = None) -> str: ...


@runtime_checkable
class TaskBoundUser(UserSimulator, Protocol):
    """A `UserSimulator` that plays one task's scenario: the env calls ``for_task`` at every reset.

    ``task`` is the env's task record (e.g. the service env's ``ServiceTask``); one unbound instance serves
    every task.
    """

    def for_task(self, task: Any) -> UserSimulator: ...


@runtime_checkable
class DeviceUser(UserSimulator, Protocol):
    """A `UserSimulator` with its own device (tau2 telecom's phone), given by the env after binding.

    ``device(name, arguments) -> result text`` runs one of the user's own tools.
    """

    def attach_device(self, device: Callable[[str, Mapping[str, Any]], str]) -> None: ...


@runtime_checkable
class Judge(Protocol):
    """Scores a response against a criterion, in [0, 1]."""

    def score(self, prompt: str, response: str, *, criterion: str = "", seed: int | None = None) -> float: ...


@runtime_checkable
class Critic(Protocol):
    """Natural-language feedback on an agent's trajectory so far."""

    def feedback(self, question: str, trajectory: Sequence[Message], *, seed: int | None = None) -> str: ...


@runtime_checkable
class Reader(Protocol):
    """Answers a question from a text (a memory, a document chunk)."""

    def answer(self, question: str, context: str, *, seed: int | None = None) -> str: ...


@runtime_checkable
class Annotator(Protocol):
    """Labels the steps of a finished trajectory (IAPO's influence annotation)."""

    def annotate(
        self, trajectory: Sequence[Message], *, seed: int | None = None
    ) -> Sequence[Mapping[str, Any]]: ...


@runtime_checkable
class Retriever(Protocol):
    """Returns the ids and texts of the ``k`` best documents for a query."""

    def search(self, query: str, *, k: int = 5, seed: int | None = None) -> Sequence[tuple[str, str]]: ...


@runtime_checkable
class TTS(Protocol):
    """Text to speech: a mono float32 waveform at 16 kHz."""

    def synthesize(self, text: str, *, seed: int | None = None) -> np.ndarray: ...


@runtime_checkable
class ASR(Protocol):
    """Speech to text from a mono float32 waveform at 16 kHz."""

    def transcribe(self, audio: np.ndarray, *, seed: int | None = None) -> str: ...
