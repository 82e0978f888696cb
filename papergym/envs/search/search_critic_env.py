"""`papergym/SearchCritic-v0`: multi-hop search over a fictional encyclopedia, with requestable feedback."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from papergym.backends.protocols import ChatModel, Critic, Retriever
from papergym.backends.resolve import resolve_backend
from papergym.backends.usage import usage_of
from papergym.core import info_keys as K
from papergym.core.errors import BackendError
from papergym.core.tags import last_tagged
from papergym.core.tasks import DEFAULT_SPLIT_SIZES, Task, TaskGenerator
from papergym.core.text_env import ObsMode, TextEnv, Turn
from papergym.core.tool_calls import parse_tool_calls
from papergym.envs.search.corpus import get_file_corpus, get_world, load_questions
from papergym.envs.search.critic import CriticView, OracleCritic, cafe_critic
from papergym.envs.search.formats import (
    CAFE_PROMPT,
    FEEDBACK,
    FORMATS,
    NOTE,
    R1_ACTION,
    REQUEST,
    SEARCH_R1_INVALID,
    SEARCH_R1_PROMPT,
    SEARCH_TOOL,
    search_action,
)
from papergym.envs.search.knowledge_base import read_attribute
from papergym.envs.search.questions import (
    QUESTION_TYPES,
    QAItem,
    combine_answer,
    exact_match,
    f1_score,
    make_question,
    normalize_answer,
)
from papergym.envs.search.retrieval import RETRIEVERS, get_file_retriever, get_retriever

MAX_TOOL_CALLS = 30
"""CAFE's limit on tool calls per trajectory (envs.md §3.4)."""
FEEDBACK_BUDGET = 1
"""CAFE's request budget (envs.md §3.3)."""
TOP_K = 3
"""Passages per query: Search-R1's ``topk=3`` (envs.md §3.5); CAFE does not state its own."""
MAX_QUERIES_PER_CALL = 5
"""Queries in one search call (inferred: CAFE's ``query`` is a list with no stated bound)."""
MAX_QUERY_CHARS = 500
"""Longest query accepted (inferred)."""


@dataclass
class _State:
    """The env's per-episode state (snapshotted)."""

    item: QAItem
    tool_calls: int = 0
    requests: int = 0
    critic_calls: int = 0
    critic_tokens: int = 0
    """Prompt plus completion tokens of model-backed critic calls (0 for the oracle critic)."""
    retrieved: list[int] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    last_results: list[int] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    request_step: int | None = None
    prefix: str | None = None
    feedback: str | None = None
    critic_input: dict[str, Any] | None = None
    """What the critic was given: ``question`` and ``trajectory`` (the messages so far)."""
    solved: bool = False


class SearchCriticEnv(TextEnv):
    """A search agent that may request critic feedback, on multi-hop questions over a fictional encyclopedia.

    ## Description
    CAFE's setting (Coupled Agent-Feedback Evolution): the agent answers a 2WikiMultihopQA-style question
    (compositional, comparison, inference, bridge comparison) by searching a procedurally generated
    encyclopedia whose names are invented (so answers cannot come from a model's memory) and whose people
    have namesakes (distractor passages). It may request feedback once: the critic (by default an oracle
    that knows the gold evidence chain) diagnoses its drift and hints at the next correction without
    giving the answer. ``format="search_r1"`` is Search-R1's format (``<search>`` / ``<answer>``, no critic).

    ## Observation
    ``obs_mode="text"``: the new text: first the prompt, the tool schema and the question; then
    ``<information>`` blocks (``Doc i(Title: ...) text``, one block per query), ``<feedback>...</feedback>``,
    or a message about an invalid action. ``obs_mode="chat"``: the whole conversation as messages.

    ## Action
    A ``str``, one turn of the agent. ``format="cafe"``: optional ``<think>`` / ``<plan>``, then exactly
    one of ``<tool_call>{"name": "search", "arguments": {"query": [...]}}</tool_call>``,
    ``<request_feedback></request_feedback>`` or ``<answer>...</answer>`` (the turn's last ``<answer>``
    counts). ``format="search_r1"``: the first ``<search>q</search>`` or ``<answer>a</answer>``.
    Anything else is invalid and gets a feedback message.

    ## Reward
    ``outcome``: 1.0 when the answer matches a gold answer or alias after SQuAD normalisation (exact match)
    and every passage of the gold evidence chain was retrieved during the episode (a loaded question has
    no chain, so only the match counts), else 0.0, at the answer; ``format``: ``-format_penalty`` for an
    invalid action. ``info["checks"]`` holds ``exact_match``, ``evidence_retrieved``, ``f1`` (token F1) and
    ``grounded`` (the answer occurs in a retrieved passage). CAFE's
    request reward and advantage shaping are `papergym.credit.feedback`'s ``FeedbackRequestReward`` and
    ``FeedbackAdvantageShaping``; ``info["segments"]`` gives them each step's part of the trajectory.

    ## Episode End
    Terminates at an answer. Truncated by the time limit (40 steps) or by a critic backend fault
    (``info["error"]``). Tool calls beyond ``max_tool_calls`` are refused as invalid.

    ## Arguments
    - ``format``: ``"cafe"`` (default) or ``"search_r1"``.
    - ``n_passages``: corpus size (default 10,000; one passage per entity); ``corpus_seed``: the world's seed.
    - ``retriever``: None or ``"bm25"`` (bm25s, the default; extra ``retrieval``), ``"dense"`` (extra
      ``retrieval-dense``) or any object with ``search(query, *, k, seed)`` returning ``(passage id,
      contents)`` pairs.
    - ``critic``: None or ``"oracle"`` (`OracleCritic`, the default), any `Critic`, or a bare `ChatModel`
      (it becomes ``cafe_critic(chat_model)``: a `ModelCritic` with CAFE's critic prompt). A
      `PolicyChatModel` of the agent's own policy (`papergym.baselines.policy`) makes one model play both
      roles, weights shared, as CAFE does.
    - ``feedback_budget``: requests answered per episode (CAFE: 1).
    - ``top_k`` (3, Search-R1), ``max_tool_calls`` (30, CAFE), ``max_queries_per_call`` (5, inferred).
    - ``question_types``: the styles drawn (all four by default); ``test_size``: questions in the test split.
    - ``corpus_path`` and ``questions_path``: real data instead of the generated world: a corpus jsonl
      (``id``, ``contents``: Search-R1 / FlashRAG) and a jsonl or parquet of ``question`` /
      ``golden_answers``, played as one ``test`` split in file order. Loaded questions have no evidence
      chain: the oracle critic then gives generic advice and the oracle answers with the gold answer.
    - ``obs_mode``, ``render_mode``, ``format_penalty`` (default 0.1, inferred): see `TextEnv`.

    ## Paper
    CAFE (arXiv 2608.24794; papers/envs.md §3): interaction format (Appendix B), a budget of one feedback
    request, at most 30 tool calls, EM and F1. Search-R1 (PeterGriffinJin/Search-R1): prompt, invalid-action
    message, ``<information>`` rendering and top-3 retrieval.

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/SearchCritic-v0", n_passages=500)
    >>> obs, info = env.reset(seed=0)
    >>> while True:
    ...     obs, reward, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
    ...     if terminated or truncated:
    ...         break
    >>> reward, info["success"]
    (1.0, True)
    """

    def __init__(
        self,
        format: str = "cafe",
        *,
        n_passages: int = 10_000,
        corpus_seed: int = 0,
        retriever: Retriever | str | None = None,
        critic: Critic | ChatModel | str | None = None,
        feedback_budget: int = FEEDBACK_BUDGET,
        top_k: int = TOP_K,
        max_tool_calls: int = MAX_TOOL_CALLS,
        max_queries_per_call: int = MAX_QUERIES_PER_CALL,
        question_types: Sequence[str] = QUESTION_TYPES,
        test_size: int = DEFAULT_SPLIT_SIZES["test"],
        corpus_path: str | None = None,
        questions_path: str | None = None,
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
    ) -> None:
        if format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {format!r}")
        for name, value, low in (
            ("feedback_budget", feedback_budget, 0),
            ("top_k", top_k, 1),
            ("max_tool_calls", max_tool_calls, 1),
            ("max_queries_per_call", max_queries_per_call, 1),
        ):
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        bad = [q for q in question_types if q not in QUESTION_TYPES]
        if bad or not question_types:
            raise ValueError(
                f"question_types must be a non-empty subset of {QUESTION_TYPES}, got {question_types}"
            )
        if (corpus_path is None) != (questions_path is None):
            raise ValueError("real data needs both corpus_path (a corpus jsonl) and questions_path")
        self.format = format
        self.n_passages = int(n_passages)
        self.corpus_seed = int(corpus_seed)
        # a name stays a name: the index it names is built over this env's corpus (shared per process)
        self.retriever: Retriever | str = resolve_backend(
            retriever,
            role="retriever",
            method="search",
            default=lambda: RETRIEVERS[0],
            names={name: (lambda name=name: name) for name in RETRIEVERS},
        )
        self.critic: Critic = resolve_backend(
            critic,
            role="critic",
            method="feedback",
            default=OracleCritic,
            names={"oracle": OracleCritic},
            wrap=cafe_critic,  # type: ignore[arg-type]  # a bare ChatModel with CAFE's critic prompt
        )
        self.feedback_budget = feedback_budget
        self.top_k = top_k
        self.max_tool_calls = max_tool_calls
        self.max_queries_per_call = max_queries_per_call
        self.question_types = tuple(question_types)
        self.corpus_path = None if corpus_path is None else str(corpus_path)
        self.questions_path = None if questions_path is None else str(questions_path)
        self._split_sizes = {"train": DEFAULT_SPLIT_SIZES["train"], "test": int(test_size)}
        self._attach()
        if format == "cafe":
            self.tool_schemas = (SEARCH_TOOL,)
            self.canned_actions = (
                search_action(["film director"]),
                search_action(["city", "novel"]),
                f"<think>I am unsure.</think>{REQUEST}</request_feedback>",
                "<think>Guess.</think><answer>yes</answer>",
            )
        else:
            self.canned_actions = (
                "<search>film director</search>",
                "<search>city</search>",
                "<answer>no</answer>",
            )
        super().__init__(obs_mode=obs_mode, render_mode=render_mode, format_penalty=format_penalty)
        self._s: _State | None = None

    def _attach(self) -> None:
        """(Re)acquire the shared world, index and task generator (built once per process)."""
        self._questions: list[QAItem] | None = None
        if self.corpus_path is not None and self.questions_path is not None:
            self._kb, self.corpus = None, get_file_corpus(self.corpus_path)
            self._questions = load_questions(self.questions_path)
            if not self._questions:
                raise ValueError(f"{self.questions_path} holds no questions")
            self._split_sizes = {"test": len(self._questions)}
            index = (
                get_file_retriever(self.retriever, self.corpus_path)
                if isinstance(self.retriever, str)
                else None
            )
        else:
            self._kb, self.corpus = get_world(self.corpus_seed, self.n_passages)
            index = (
                get_retriever(self.retriever, self.corpus_seed, self.n_passages)
                if isinstance(self.retriever, str)
                else None
            )
        self._index = index
        family = f"search-s{self.corpus_seed}-n{self.n_passages}"
        self._generator = TaskGenerator(family, self._generate, levels=1, split_sizes=self._split_sizes)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        for key in ("_kb", "corpus", "_index", "_generator", "_questions"):
            state.pop(key, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._attach()

    def _generate(self, rng: Any, difficulty: int) -> QAItem:
        del difficulty
        qtype = self.question_types[rng.randrange(len(self.question_types))]
        return make_question(self._kb, rng, qtype)

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(self._split_sizes)

    @property
    def item(self) -> QAItem:
        """The current question."""
        return self._require_state().item

    def _require_state(self) -> _State:
        if self._s is None:
            self._require_episode()
        return self._s  # type: ignore[return-value]

    # ------------------------------------------------------------------ TextEnv
    def _new_task(self, options: Mapping[str, Any]) -> Task:
        if self._questions is not None:
            return self._loaded_task(options)
        if "task_id" in options:
            return self._generator.from_id(options["task_id"])
        return self._generator.sample(
            self.np_random, options.get("split", "train"), options.get("difficulty", 1)
        )

    def _loaded_task(self, options: Mapping[str, Any]) -> Task:
        """A task of the loaded question file (one ``test`` split, in file order)."""
        questions = self._questions or []
        family = "search-file"
        if "task_id" in options:
            parts = str(options["task_id"]).split("/")
            if len(parts) != 4 or parts[0] != family or parts[1] != "test" or not parts[3].isdigit():
                raise ValueError(f"task_id must be '{family}/test/L1/<index>', got {options['task_id']!r}")
            index = int(parts[3])
        else:
            if options.get("split", "test") != "test":
                raise ValueError("a loaded question file is a single 'test' split")
            index = int(self.np_random.integers(len(questions)))
        if not 0 <= index < len(questions):
            raise ValueError(f"task index must be in 0..{len(questions) - 1}")
        return Task(f"{family}/test/L1/{index}", family, "test", 1, index, questions[index])

    def _system_prompt(self, task: Task) -> str:
        if self.format == "search_r1":
            return SEARCH_R1_PROMPT
        tools = json.dumps({"type": "function", "function": SEARCH_TOOL})
        return CAFE_PROMPT.format(budget=self.feedback_budget, max_calls=self.max_tool_calls, tools=tools)

    def _start(self, task: Task) -> Turn:
        item: QAItem = task.payload
        self._s = _State(item)
        return Turn(f"Question: {item.question}", info={K.QUESTION_TYPE: item.qtype})

    def _act(self, action: str) -> Turn:
        s = self._require_state()
        step = len(s.actions)
        if self.format == "cafe":
            for _, note in NOTE.findall(action):
                s.notes.append(note.strip()[-1000:])
            turn = self._act_cafe(action, s)
        else:
            turn = self._act_search_r1(action, s)
        s.actions.append(action)
        segment = "pre" if s.request_step is None else ("request" if s.request_step == step else "post")
        segments: dict[str, Any] = {
            "segment": segment,
            # -1 before any request: vector envs stack info values and need one type per key.
            "request_step": -1 if s.request_step is None else s.request_step,
            "n_requests": s.requests,
        }
        if s.prefix is not None:
            seen = s.critic_input or {}
            critic_input = {
                "question": seen.get("question", ""),
                "trajectory": [dict(m) for m in seen.get("trajectory", ())],
            }
            segments |= {"prefix": s.prefix, "feedback": s.feedback, "critic_input": critic_input}
        cost = {"critic_calls": s.critic_calls, "critic_tokens": s.critic_tokens, "tool_calls": s.tool_calls}
        info = {K.SEGMENTS: segments, K.COST: cost}
        turn.info = {**turn.info, **info}
        return turn

    def _act_cafe(self, action: str, s: _State) -> Turn:
        answer = last_tagged(action, "answer")
        kinds = [answer is not None, "<tool_call>" in action, REQUEST in action]
        if sum(kinds) != 1:
            what = "more than one action" if sum(kinds) > 1 else "no action"
            return self._invalid(
                f"Your turn has {what}. End each turn with exactly one of: a <tool_call> search, "
                "<request_feedback></request_feedback>, or <answer>...</answer>.",
                **{K.PARSED_ACTION: {}},
            )
        if answer is not None:
            return self._answer(answer[1], s)
        if kinds[2]:
            return self._request(s)
        parsed = parse_tool_calls(action)
        if not parsed.ok or not parsed.calls:
            return self._invalid(
                f"Invalid tool call: {parsed.error or 'no call found'}", **{K.PARSED_ACTION: {}}
            )
        batches = []
        for call in parsed.calls:
            error = self._validate(call.name, call.arguments)
            if error:
                calls = [{**c.to_dict(), "ok": False} for c in parsed.calls]
                return self._invalid(error, **{K.PARSED_ACTION: {}, K.TOOL_CALLS: calls})
            batches.append(list(call.arguments["query"]))
        if s.tool_calls + len(batches) > self.max_tool_calls:
            return self._invalid(
                f"You have used {s.tool_calls} of your {self.max_tool_calls} tool calls; answer now.",
                **{K.PARSED_ACTION: {}},
            )
        results = [self._search(queries, s) for queries in batches]
        return Turn(
            "\n".join(results),
            info={
                K.PARSED_ACTION: {"search": batches},
                K.TOOL_CALLS: [{**c.to_dict(), "ok": True} for c in parsed.calls],
                K.TOOL_RESULTS: results,
            },
        )

    def _act_search_r1(self, action: str, s: _State) -> Turn:
        match = R1_ACTION.search(action)
        if match is None or not match[2].strip():
            return self._invalid(SEARCH_R1_INVALID, **{K.PARSED_ACTION: {}})
        if match[1] == "answer":
            return self._answer(match[2], s)
        query = match[2].strip()[:MAX_QUERY_CHARS]
        if s.tool_calls >= self.max_tool_calls:
            return self._invalid(
                f"You have used all {self.max_tool_calls} searches; answer now.", **{K.PARSED_ACTION: {}}
            )
        result = self._search([query], s)
        call = {"name": "search", "arguments": {"query": [query]}, "ok": True}
        return Turn(
            f"\n\n{result}\n\n",
            info={K.PARSED_ACTION: {"search": [query]}, K.TOOL_CALLS: [call], K.TOOL_RESULTS: [result]},
        )

    def _validate(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        """A message for the model when a tool call is not a valid search, else None."""
        if name != "search":
            return f"Unknown tool {name!r}; the only tool is 'search'."
        extra = set(arguments) - {"query"}
        if extra or "query" not in arguments:
            return (
                f'search takes exactly one argument, "query" (an array of strings); got {sorted(arguments)}'
            )
        queries = arguments["query"]
        if not isinstance(queries, list) or not all(isinstance(q, str) and q.strip() for q in queries):
            return 'search\'s "query" must be an array of non-empty strings, e.g. {"query": ["Tek city"]}'
        if not 1 <= len(queries) <= self.max_queries_per_call:
            return f'search takes 1 to {self.max_queries_per_call} queries in "query", got {len(queries)}'
        if any(len(q) > MAX_QUERY_CHARS for q in queries):
            return f"each query must be at most {MAX_QUERY_CHARS} characters"
        return None

    def _positions(self, query: str) -> list[int]:
        if self._index is not None:
            return self._index.search_positions(query, k=self.top_k)
        hits = self.retriever.search(query, k=self.top_k, seed=None)
        return [self.corpus.position[pid] for pid, _ in hits if pid in self.corpus.position]

    def _search(self, queries: Sequence[str], s: _State) -> str:
        """Run one search call; every query gets its own ``<information>`` block."""
        s.tool_calls += 1
        s.last_results = []
        blocks = []
        for query in queries:
            positions = self._positions(query)
            s.queries.append(query)
            s.retrieved.extend(positions)
            s.last_results.extend(positions)
            docs = "\n".join(
                f"Doc {i}(Title: {self.corpus.titles[p]}) {self.corpus.texts[p]}"
                for i, p in enumerate(positions, 1)
            )
            blocks.append(f"<information>{docs or 'No results.'}</information>")
        return "\n".join(blocks)

    def _request(self, s: _State) -> Turn:
        s.requests += 1
        if s.requests > self.feedback_budget:
            return Turn(
                f"No feedback left (budget {self.feedback_budget}); continue on your own.",
                info={K.PARSED_ACTION: {"request_feedback": True}},
            )
        if isinstance(self.critic, OracleCritic):
            self.critic.bind(
                CriticView(
                    s.item,
                    self.corpus,
                    list(s.retrieved),
                    list(s.queries),
                    list(s.last_results),
                    list(s.notes),
                )
            )
        messages = [m for m in self._require_episode().messages if m["role"] != "system"]
        s.critic_calls += 1
        usage = usage_of(self.critic)
        before = usage.as_dict() if usage is not None else {}
        try:
            reply = self.critic.feedback(s.item.question, messages, seed=int(self.np_random.integers(2**31)))
        except BackendError as exc:
            error = {"type": type(exc).__name__, "message": str(exc), "retryable": exc.retryable}
            return Turn("The critic is unavailable.", truncated=True, info={K.ERROR: error})
        if usage is not None:
            spent = usage.since(before)
            s.critic_tokens += spent["prompt_tokens"] + spent["completion_tokens"]
        match = FEEDBACK.search(reply)
        text = (match[1] if match else reply).strip()
        s.request_step = len(s.actions)
        s.prefix = "\n".join(s.actions)
        s.feedback = text
        s.critic_input = {"question": s.item.question, "trajectory": [dict(m) for m in messages]}
        return Turn(f"<feedback>{text}</feedback>", info={K.PARSED_ACTION: {"request_feedback": True}})

    def _answer(self, raw: str, s: _State) -> Turn:
        answer = raw.strip()
        if not answer:
            return self._invalid(
                "The answer is empty; write a short answer inside <answer></answer>.", **{K.PARSED_ACTION: {}}
            )
        answers = s.item.answers
        matched = exact_match(answer, answers)
        # Success is gated on the gold evidence chain having been retrieved (a loaded question has
        # none, so only the match counts there): a guessed answer without looking is not a success.
        seen = set(s.retrieved)
        looked = all(self.corpus.position.get(e) in seen for e in s.item.evidence)
        s.solved = matched and looked
        norm = normalize_answer(answer)
        grounded = bool(norm) and any(
            f" {norm} " in f" {normalize_answer(self.corpus.contents(p))} " for p in seen
        )
        checks = {
            "exact_match": matched,
            "evidence_retrieved": looked,
            "f1": f1_score(answer, answers),
            "grounded": grounded,
        }
        return Turn(
            "Correct." if s.solved else "Incorrect.",
            {"outcome": float(s.solved)},
            terminated=True,
            info={K.ANSWER: norm, K.PARSED_ACTION: {"answer": answer}, K.CHECKS: checks},
        )

    def chain_found(self) -> int:
        """Passages of the gold evidence chain retrieved so far. Privileged, like `oracle_action`: for
        building teacher data (CAFE's recovery SFT locates the first stalled turn with it), never a reward."""
        s = self._require_state()
        seen = set(s.retrieved)
        return sum(self.corpus.position.get(e) in seen for e in s.item.evidence)

    def success_check(self) -> bool:
        return self._require_state().solved

    def oracle_action(self) -> str:
        """Search the chain's next entity, or answer from the passages retrieved so far.

        The plan (which relation to read at each hop) is privileged; every name and value comes from
        retrieved text, so the oracle never reads the answer from the task record.
        """
        s = self._require_state()
        values: list[str] = []
        quals: list[str] = []
        seen = dict.fromkeys(s.retrieved)
        for hop in s.item.hops:
            name, qual = (
                (hop.name, hop.qualifier)
                if hop.name_from < 0
                else (values[hop.name_from], quals[hop.name_from])
            )
            wanted = {name, f"{name} ({qual})"}
            pos = next((p for p in seen if self.corpus.titles[p] in wanted), None)
            read = read_attribute(self.corpus.texts[pos], hop.read) if pos is not None else None
            if read is None:
                # The first query not yet tried (a query that missed would miss again: the index is fixed).
                tries = [f"{name} {qual}".strip(), name, f'"{name}" {qual} born'.strip()]
                query = next((q for q in tries if q not in s.queries), tries[0])
                return self._format_search(query, s)
            values.append(read[0])
            quals.append(read[1])
        # A loaded question has no hop plan: the oracle is then privileged and gives the gold answer.
        answer = combine_answer(s.item, values) if values else s.item.answers[0]
        return f"<think>The evidence is complete.</think><answer>{answer}</answer>"

    def _format_search(self, query: str, s: _State) -> str:
        if self.format == "search_r1":
            return f"<think>I need to look up {query}.</think><search>{query}</search>"
        plan = "<plan>Find each entity of the question in turn, then answer.</plan>" if not s.actions else ""
        return f"<think>I need to look up {query}.</think>{plan}{search_action([query])}"

    def _state(self) -> Any:
        return self._s

    def _load_state(self, state: Any) -> None:
        self._s = state


CONTRACT_VARIANTS: list[dict[str, Any]] = [
    {"format": "cafe", "n_passages": 2000},
    {"format": "search_r1", "n_passages": 2000},
]
