"""`papergym/Reasoning-v0` and `papergym/MultiDomain-v0`: single-turn verifiable problems."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from papergym.core import info_keys as K
from papergym.core.tasks import DEFAULT_SPLIT_SIZES, Task, TaskGenerator, parse_task_id
from papergym.core.text_env import ObsMode, TextEnv, Turn
from papergym.envs.reasoning.answers import extract_answer, normalize_text, parse_number
from papergym.envs.reasoning.domains import DOMAIN_NAMES, EXTRA_DOMAINS, get_domain
from papergym.envs.reasoning.problem import Domain, Problem

SYSTEM_PROMPT = (
    "You are a careful problem solver. Reason step by step if it helps, then give your final answer "
    "in the format the problem asks for."
)
ANSWER_INSTRUCTIONS = {
    "boxed": "Put your final answer in \\boxed{}.",
    "tag": "Put your final answer between <answer> and </answer>.",
}
CANNED_ANSWERS = ("0", "1", "2", "3", "5", "10", "12", "42", "100", "yes")


def format_answer(domain: Domain, answer: str) -> str:
    """``answer`` written in ``domain``'s answer format."""
    return f"\\boxed{{{answer}}}" if domain.answer_format == "boxed" else f"<answer>{answer}</answer>"


def canonical_answer(answer: str) -> str:
    """The form answers are compared and voted in: a number in ``%.9g`` form, else normalised text."""
    number = parse_number(answer)
    return f"{number:.9g}" if number is not None else normalize_text(answer)


class ReasoningEnv(TextEnv):
    """Single-turn verifiable problems in the five domains of the multi-domain fusion paper.

    ## Description
    One problem per episode: the model writes a completion that ends with its final answer; the
    env extracts the last ``\\boxed{...}`` or ``<answer>...</answer>`` and checks it with the
    domain's verifier. Domains: ``math`` (arithmetic and word problems), ``code`` (predict a
    short program's output; the env computes it with its own generator's logic and never runs
    model text), ``science`` (unit conversion and formula problems), ``instruction`` (a text
    that must satisfy checkable format constraints), ``agent`` (choose the right tool call).

    ## Observation
    ``obs_mode="text"``: the system prompt and the problem, then a one-line verdict.
    ``obs_mode="chat"``: the conversation as ``{"role", "content"}`` messages.

    ## Action
    A ``str``, the whole completion.

    ## Reward
    ``correct`` (1.0 if the answer is right, else 0.0) plus ``format`` (0.0 when an answer was
    found, ``-format_penalty`` when none was).

    ## Episode End
    Terminates after the first action.

    ## Arguments
    - ``domain``: one of ``math``, ``code``, ``science``, ``instruction``, ``agent`` (the paper's five), or
      ``countdown`` (Countdown-lite: reach a target with the given numbers, the CPU-scale task of
      papers/training.md §5.5; solutions are not unique), or ``arith`` (one-step
      arithmetic sized for the tiny LM, one integer answer).
    - ``difficulty``: a fixed level in 1..3, or None to draw one per episode.
    - ``test_size``: tasks in the fixed test split (per level); train is effectively unbounded.
    - ``obs_mode``, ``render_mode``, ``format_penalty`` (default 0.1, inferred): see `TextEnv`.

    ## Paper
    The five domains of M2RL, "To Mix or To Merge" (arXiv 2602.12566; papers/training.md §3).

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/Reasoning-v0", domain="math")
    >>> obs, info = env.reset(seed=0)
    >>> _, reward, terminated, _, info = env.step(env.unwrapped.oracle_action())
    >>> reward, terminated, info["success"]
    (1.0, True, True)
    """

    terminate_on_invalid = True

    def __init__(
        self,
        domain: str = "math",
        *,
        difficulty: int | None = None,
        test_size: int = DEFAULT_SPLIT_SIZES["test"],
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
    ) -> None:
        self._configure((domain,), difficulty, {"train": DEFAULT_SPLIT_SIZES["train"], "test": test_size})
        super().__init__(obs_mode=obs_mode, render_mode=render_mode, format_penalty=format_penalty)

    def _configure(
        self, domains: Sequence[str], difficulty: int | None, split_sizes: Mapping[str, int]
    ) -> None:
        """Set up the domains and their task generators (before `TextEnv.__init__`, which reads
        `canned_actions`)."""
        if not domains:
            raise ValueError(f"choose at least one domain from {(*DOMAIN_NAMES, *EXTRA_DOMAINS)}")
        self.domains = tuple(domains)
        self._domains = {name: get_domain(name) for name in self.domains}
        self._generators = {
            name: TaskGenerator(name, d.generate, levels=d.levels, split_sizes=split_sizes)
            for name, d in self._domains.items()
        }
        self._splits = tuple(split_sizes)
        levels = min(d.levels for d in self._domains.values())
        if difficulty is not None and not (isinstance(difficulty, int) and 1 <= difficulty <= levels):
            raise ValueError(f"difficulty must be None or an int in 1..{levels}, got {difficulty!r}")
        self.difficulty = difficulty
        formats = sorted({d.answer_format for d in self._domains.values()})
        self.canned_actions = tuple(
            f"\\boxed{{{a}}}" if fmt == "boxed" else f"<answer>{a}</answer>"
            for fmt in formats
            for a in CANNED_ANSWERS
        )
        self._problem: Problem | None = None
        self._answer: str | None = None
        self._solved = False

    @property
    def splits(self) -> tuple[str, ...]:
        return self._splits

    @property
    def problem(self) -> Problem:
        """The current episode's problem."""
        if self._problem is None:
            self._require_episode()
        return self._problem  # type: ignore[return-value]

    # ------------------------------------------------------------------ TextEnv
    def _new_task(self, options: Mapping[str, Any]) -> Task:
        if "task_id" in options:
            family, split, difficulty, _ = parse_task_id(options["task_id"])
            if family not in self._generators:
                raise ValueError(f"task_id {options['task_id']!r} is not a task of domains {self.domains}")
            for key, value in (("split", split), ("difficulty", difficulty)):
                if key in options and options[key] != value:
                    raise ValueError(
                        f"options[{key!r}]={options[key]!r} contradicts task_id {options['task_id']!r}"
                    )
            return self._generators[family].from_id(options["task_id"])
        name = (
            self.domains[int(self.np_random.integers(len(self.domains)))]
            if len(self.domains) > 1
            else self.domains[0]
        )
        split = options.get("split", self.splits[0])
        return self._generators[name].sample(
            self.np_random, split, options.get("difficulty", self.difficulty)
        )

    def _system_prompt(self, task: Task) -> str:
        return SYSTEM_PROMPT

    def _start(self, task: Task) -> Turn:
        problem: Problem = task.payload
        self._problem, self._answer, self._solved = problem, None, False
        instruction = ANSWER_INSTRUCTIONS[self._domains[problem.domain].answer_format]
        return Turn(f"{problem.prompt}\n\n{instruction}", info={K.DOMAIN: problem.domain})

    def _act(self, action: str) -> Turn:
        problem = self.problem
        answer = extract_answer(action)
        info: dict[str, Any] = {K.DOMAIN: problem.domain}
        if answer is None:
            fmt = self._domains[problem.domain].answer_format
            turn = self._invalid(
                f"No final answer found. {ANSWER_INSTRUCTIONS[fmt]}",
                **info,
                **{K.ANSWER: None, K.PARSED_ACTION: None, K.CHECKS: {"format": False, "correct": False}},
            )
            return replace(turn, reward_components={"correct": 0.0, **turn.reward_components})
        self._answer = answer
        self._solved = self._domains[problem.domain].is_correct(problem, answer)
        info |= {
            K.ANSWER: canonical_answer(answer),
            K.PARSED_ACTION: answer,
            K.CHECKS: {"format": True, "correct": self._solved},
        }
        return self._verdict(info)

    def _verdict(self, info: dict[str, Any]) -> Turn:
        """The final turn once an answer was read (TestTime overrides it to hide the outcome)."""
        return Turn(
            "Correct." if self._solved else "Incorrect.",
            {"correct": float(self._solved), "format": 0.0},
            terminated=True,
            info=info,
        )

    def success_check(self) -> bool:
        return self._solved

    def oracle_action(self) -> str:
        problem = self.problem
        return format_answer(self._domains[problem.domain], problem.answer)

    def _state(self) -> Any:
        return (self._problem, self._answer, self._solved)

    def _load_state(self, state: Any) -> None:
        self._problem, self._answer, self._solved = state


CONTRACT_VARIANTS: list[dict[str, Any]] = [{"domain": name} for name in (*DOMAIN_NAMES, *EXTRA_DOMAINS)]
