"""`papergym/MemoryQA-v0`: read a long document page by page through a bounded working memory."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, ClassVar, Literal

from papergym.backends.model_roles import ModelReader
from papergym.backends.protocols import ChatModel, Reader
from papergym.backends.resolve import resolve_backend
from papergym.core import info_keys as K
from papergym.core.errors import BackendError
from papergym.core.tags import last_tagged
from papergym.core.tasks import DEFAULT_SPLIT_SIZES, Task, TaskGenerator
from papergym.core.text_env import ObsMode, TextEnv, Turn
from papergym.envs.memory_qa.documents import (
    KINDS,
    DocumentPlan,
    Question,
    fact_line,
    normalize_answer,
    page_text,
    plan_document,
)
from papergym.envs.memory_qa.reader import ExtractiveReader

MemoryUnit = Literal["chars", "tokens"]
_TOKEN = re.compile(r"\S+")
INSTRUCTIONS = (
    "You answer a question about a long document that you read one page at a time. You cannot see "
    "earlier pages: after each page you write your working memory, which replaces the old one, and "
    "the memory is all you keep."
)


@dataclass(slots=True)
class _Reading:
    """The episode's state."""

    plan: DocumentPlan
    chunks: tuple[int, ...]
    pos: int = 0  # index into chunks of the page shown; len(chunks): the answer phase
    memory: str = ""
    page: str = ""
    answer: str | None = None
    correct: bool = False


class MemoryQAEnv(TextEnv):
    """Long-document question answering through a capped working memory, with its context reset.

    ## Description
    Each task is a procedurally generated long document (an annual report, a service manual or
    a case file; 20-60 pages by default) with narrative text, key facts, tables, cross-references
    and distractor facts about similar-named subjects, plus a question whose evidence sits on known
    pages: a single fact, an aggregation (a total over 2-3 pages) or a comparison across two
    pages. A share of questions (``guessable_share``) is guessable: the answer is the attribute's
    default (also its most frequent value) or the first-named option, so a right answer does not
    prove that the memory held the evidence. The agent reads one page (chunk) per step and writes
    its new working memory; its context is reset every step: it sees only the question, its memory
    and the current page. After the last page it answers from the question and its memory alone.
    The final memory is then judged by ``reader``, answering from (question, memory) with no pages:
    memory-only answerability.

    ## Observation
    Every observation is the whole current context (``info["context_reset"]`` is True on every
    step): the instructions, the question, the memory and the current page, or in the answer phase
    the question and the memory. ``obs_mode="chat"``: one user message holding that context (not
    the transcript; ``render()`` keeps the transcript). ``env.unwrapped.page_image(i)`` draws
    page ``i`` with PIL, and ``render_mode="rgb_array"`` returns the current page's image.

    ## Action
    A ``str``. While reading: the new memory between ``<memory>`` and ``</memory>`` (the last such
    pair counts); a memory over ``memory_limit`` is cut and the agent is told so. After the last
    page: the answer between ``<answer>`` and ``</answer>``. A missing tag is an invalid action:
    feedback, the ``format`` penalty, the same context again and the memory unchanged.

    ## Reward
    ``outcome``: 1.0 if the final answer is right (case, spacing and thousands separators
    ignored), else 0.0, on the final step; ``format``: ``-format_penalty`` per invalid action.
    ``info["checks"]`` holds ``correct`` and ``memory_answerable``; ``info["reader_answer"]``
    the reader's memory-only answer. `papergym.wrappers.FourCellReward` replaces ``outcome`` with
    the four-cell value over (correct, answerable).

    ## Episode End
    Terminates on the answer; truncated with ``info["error"]`` if a model reader fails.

    ## Arguments
    - ``kind``: ``"annual_report"``, ``"manual"``, ``"case_file"`` or None (all three).
    - ``pages``: the page-count range ``(low, high)``, default ``(20, 60)``; ``low >= 3``.
    - ``evidence_only``: read only the gold evidence pages (the paper's diagnostic).
    - ``memory_limit`` / ``memory_unit``: the memory cap (default 512 ``"chars"``, inferred; or
      ``"tokens"``, whitespace-separated).
    - ``guessable_share``: the probability a question is guessable (default 0.3, inferred).
    - ``reader``: the answerability `Reader` (the backend rule of `papergym.backends`): None or
      ``"extractive"`` is the embedded `ExtractiveReader`; a bare `ChatModel` becomes `ModelReader`;
      ``MajorityReader(ModelReader(chat_model), k)`` for a voting model judge.
    - ``difficulty``: 1..3 distractors per evidence fact, or None to draw per episode.
    - ``test_size``: tasks in the test split per level; train is effectively unbounded.
    - ``obs_mode``, ``render_mode``, ``format_penalty`` (default 0.1, inferred): see `TextEnv`.

    ## Paper
    AWM: working-memory quality for long-document VQA (papers/training.md §6; not found, built on
    its summary: 42.5% of correct answers with gold evidence pages leave a memory that cannot
    support them) and InfoMem / MemAgent's chunk-wise memory agent.

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/MemoryQA-v0", pages=(4, 6))
    >>> obs, info = env.reset(seed=0)
    >>> done = False
    >>> while not done:
    ...     obs, reward, done, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, info["success"], info["checks"]["memory_answerable"]
    (1.0, True, True)
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    resets_context = True  # the agent sees only the question, its memory and the current page
    canned_actions = (
        "<memory></memory>",
        "<memory>Nothing relevant on this page.</memory>",
        "<answer>unknown</answer>",
        "<answer>0</answer>",
    )

    def __init__(
        self,
        kind: str | None = None,
        *,
        pages: tuple[int, int] | list[int] = (20, 60),
        evidence_only: bool = False,
        memory_limit: int = 512,
        memory_unit: MemoryUnit = "chars",
        guessable_share: float = 0.3,
        reader: Reader | ChatModel | str | None = None,
        difficulty: int | None = None,
        test_size: int = DEFAULT_SPLIT_SIZES["test"],
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
    ) -> None:
        if kind is not None and kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS} or None, got {kind!r}")
        low, high = tuple(pages) if isinstance(pages, tuple | list) and len(pages) == 2 else (None, None)
        if not (isinstance(low, int) and isinstance(high, int) and 3 <= low <= high):
            raise ValueError(f"pages must be (low, high) ints with 3 <= low <= high, got {pages!r}")
        if not isinstance(memory_limit, int) or memory_limit < 1:
            raise ValueError(f"memory_limit must be an int >= 1, got {memory_limit!r}")
        if memory_unit not in ("chars", "tokens"):
            raise ValueError(f"memory_unit must be 'chars' or 'tokens', got {memory_unit!r}")
        if not 0.0 <= guessable_share <= 1.0:
            raise ValueError(f"guessable_share must be in [0, 1], got {guessable_share}")
        if difficulty is not None and difficulty not in (1, 2, 3):
            raise ValueError(f"difficulty must be None or an int in 1..3, got {difficulty!r}")
        super().__init__(obs_mode=obs_mode, render_mode=render_mode, format_penalty=format_penalty)
        self.kind = kind
        self.pages = (low, high)
        self.evidence_only = bool(evidence_only)
        self.memory_limit = memory_limit
        self.memory_unit: MemoryUnit = memory_unit
        self.guessable_share = float(guessable_share)
        self.reader: Reader = resolve_backend(
            reader,
            role="reader",
            method="answer",
            default=ExtractiveReader,
            names={"extractive": ExtractiveReader},
            wrap=ModelReader,  # type: ignore[arg-type]  # a bare ChatModel (checked by resolve_backend)
        )
        self.difficulty = difficulty
        generate = partial(
            plan_document,
            pages=self.pages,
            kinds=KINDS if kind is None else (kind,),
            guessable_share=guessable_share,
        )
        self._tasks = TaskGenerator(
            "memory_qa",
            generate,
            levels=3,
            split_sizes={"train": DEFAULT_SPLIT_SIZES["train"], "test": test_size},
        )
        self._r: _Reading | None = None

    @property
    def splits(self) -> tuple[str, ...]:
        return self._tasks.splits

    @property
    def document(self) -> DocumentPlan:
        """The current episode's document plan."""
        return self._reading().plan

    @property
    def question(self) -> Question:
        """The current episode's question (its answer and evidence included: evaluation only)."""
        return self._reading().plan.question

    @property
    def memory(self) -> str:
        """The agent's current working memory."""
        return self._reading().memory

    @property
    def chunks(self) -> tuple[int, ...]:
        """The pages this episode reads, in order (0-based)."""
        return self._reading().chunks

    def page_text(self, page: int) -> str:
        """The text of page ``page`` (0-based) of the current document."""
        plan = self.document
        if not 0 <= page < plan.n_pages:
            raise ValueError(f"page must be in 0..{plan.n_pages - 1}, got {page}")
        return page_text(plan, page)

    def page_image(self, page: int) -> Any:
        """Page ``page`` (0-based) drawn as a ``PIL.Image.Image`` (needs ``papergym[vision]``)."""
        from papergym.envs.memory_qa.rendering import render_page_image

        return render_page_image(self.page_text(page))

    def render(self) -> Any:
        if self.render_mode == "rgb_array":
            from papergym.envs.memory_qa.rendering import page_array

            r = self._reading()
            return page_array(r.page or page_text(r.plan, r.chunks[-1]))
        return super().render()

    # ------------------------------------------------------------------ TextEnv
    def _reading(self) -> _Reading:
        if self._r is None:
            self._require_episode()
        return self._r  # type: ignore[return-value]

    def _new_task(self, options: Mapping[str, Any]) -> Task:
        if "task_id" in options:
            task = self._tasks.from_id(options["task_id"])
            for key in ("split", "difficulty"):
                if key in options and options[key] != getattr(task, key):
                    raise ValueError(
                        f"options[{key!r}]={options[key]!r} contradicts task_id {task.task_id!r}"
                    )
            return task
        return self._tasks.sample(
            self.np_random, options.get("split", "train"), options.get("difficulty", self.difficulty)
        )

    def _start(self, task: Task) -> Turn:
        plan: DocumentPlan = task.payload
        chunks = plan.question.evidence_pages if self.evidence_only else tuple(range(plan.n_pages))
        self._r = _Reading(plan, chunks, page=page_text(plan, chunks[0]))
        info = {K.PAGE: chunks[0], K.QUESTION_TYPE: plan.question.qtype}
        return Turn(self._context(), info=info)

    def _act(self, action: str) -> Turn:
        r = self._reading()
        if r.pos < len(r.chunks):
            content = _content(last_tagged(action, "memory"))
            if content is None:
                feedback = "No memory found: write your new memory between <memory> and </memory>."
                return self._invalid(f"{feedback}\n\n{self._context()}", **self._where(r))
            memory, cut = self._cap_memory(content.strip())
            r.memory = memory
            r.pos += 1
            if r.pos < len(r.chunks):
                r.page = page_text(r.plan, r.chunks[r.pos])
            note = f"{cut}\n\n" if cut else ""
            info = {
                **self._where(r),
                K.PARSED_ACTION: memory,
                K.MEMORY: memory,
                K.MEMORY_CUT: bool(cut),
            }
            return Turn(note + self._context(), {"format": 0.0}, info=info)
        content = _content(last_tagged(action, "answer"))
        if content is None:
            feedback = "No answer found: give your final answer between <answer> and </answer>."
            return self._invalid(f"{feedback}\n\n{self._context()}")
        return self._finish(content.strip(), {})

    def _finish(self, answer: str, info: dict[str, Any]) -> Turn:
        r = self._reading()
        question = r.plan.question
        r.answer = answer
        r.correct = normalize_answer(answer) == normalize_answer(question.answer)
        info |= {K.ANSWER: normalize_answer(answer), K.PARSED_ACTION: answer, K.QUESTION_TYPE: question.qtype}
        components = {"outcome": float(r.correct), "format": 0.0}
        verdict = "Correct." if r.correct else "Incorrect."
        seed = int(self.np_random.integers(2**31))
        try:
            reader_answer = self.reader.answer(question.text, r.memory, seed=seed)
        except BackendError as exc:
            info |= {
                K.CHECKS: {"correct": r.correct},
                K.UNEVALUATED: ["memory_answerable"],
                K.ERROR: {"type": type(exc).__name__, "message": str(exc), "retryable": exc.retryable},
            }
            return Turn(verdict, components, truncated=True, info=info)
        answerable = normalize_answer(str(reader_answer)) == normalize_answer(question.answer)
        info |= {
            K.READER_ANSWER: str(reader_answer),
            K.CHECKS: {"correct": r.correct, "memory_answerable": answerable},
        }
        return Turn(verdict, components, terminated=True, info=info)

    def success_check(self) -> bool:
        return self._reading().correct

    def oracle_action(self) -> str:
        r = self._reading()
        question = r.plan.question
        if r.pos < len(r.chunks):
            read = set(r.chunks[: r.pos + 1])
            kept = [fact_line(s, a, v) for s, a, v, page in question.evidence if page in read]
            return "<memory>" + "\n".join(kept) + "</memory>"
        return f"<answer>{ExtractiveReader().answer(question.text, r.memory)}</answer>"

    def _state(self) -> Any:
        return replace(self._reading())

    def _load_state(self, state: Any) -> None:
        self._r = replace(state)

    # ------------------------------------------------------------------ internals
    def _where(self, r: _Reading) -> dict[str, Any]:
        return {K.PAGE: r.chunks[r.pos]} if r.pos < len(r.chunks) else {}

    def _cap_memory(self, memory: str) -> tuple[str, str]:
        """The memory within the cap, and a message for the agent when it was cut."""
        if self.memory_unit == "chars":
            if len(memory) <= self.memory_limit:
                return memory, ""
            size = len(memory)
            kept = memory[: self.memory_limit]
        else:
            tokens = list(_TOKEN.finditer(memory))
            if len(tokens) <= self.memory_limit:
                return memory, ""
            size = len(tokens)
            kept = memory[: tokens[self.memory_limit - 1].end()]
        unit = "characters" if self.memory_unit == "chars" else "tokens"
        message = (
            f"Memory cut: your memory was {size} {unit} long; the limit is {self.memory_limit} {unit}, "
            f"so only its first {self.memory_limit} {unit} were kept."
        )
        return kept, message

    def _limit_text(self, memory: str) -> str:
        used = len(memory) if self.memory_unit == "chars" else len(_TOKEN.findall(memory))
        unit = "characters" if self.memory_unit == "chars" else "tokens"
        return f"{used}/{self.memory_limit} {unit}"

    def _context(self) -> str:
        r = self._reading()
        question = r.plan.question
        memory = r.memory or "(empty)"
        head = (
            f"{INSTRUCTIONS}\n\nQuestion: {question.text}\n\n"
            f"Your memory ({self._limit_text(r.memory)}):\n{memory}"
        )
        if r.pos < len(r.chunks):
            page = r.chunks[r.pos]
            return (
                f"{head}\n\nPage {page + 1} of {r.plan.n_pages} (chunk {r.pos + 1} of {len(r.chunks)}):\n"
                f"{r.page}\n\nWrite your new memory between <memory> and </memory>. It replaces the old "
                f"memory; keep at most {self.memory_limit} "
                f"{'characters' if self.memory_unit == 'chars' else 'tokens'}."
            )
        return (
            f"{head}\n\nYou have read the whole document. Answer the question from your memory, "
            "between <answer> and </answer>."
        )


def _content(section: tuple[int, str] | None) -> str | None:
    return None if section is None else section[1]


CONTRACT_VARIANTS: list[dict[str, Any]] = [
    {},
    {"kind": "manual", "pages": (4, 8), "evidence_only": True, "memory_unit": "tokens", "memory_limit": 64},
]
