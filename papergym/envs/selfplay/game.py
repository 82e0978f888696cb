"""One self-play round (challenger -> solver x G -> judge), shared by the AEC and the parallel env.

The round is a small state machine: `SelfPlayGame.start` draws the domain and its material,
`SelfPlayGame.act` consumes the active role's action, and once the judge has scored, `rewards` holds
every role's reward. Model text never raises: an unparseable action is an invalid action with
feedback (papers/training.md §1.3: an unparseable challenger task scores -1 and ends the round).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from papergym.core import info_keys as K
from papergym.core.tags import last_tagged
from papergym.envs.reasoning.answers import extract_answer
from papergym.envs.reasoning.domains import get_domain
from papergym.envs.reasoning.reasoning_env import canonical_answer
from papergym.envs.selfplay.judges import PairwiseJudge
from papergym.envs.selfplay.pairs import (
    AmplificationMode,
    Pair,
    bt_win_rates,
    pair_accuracy,
    role_asymmetry_pairs,
    self_scored,
    subtask_amplification_pairs,
)
from papergym.envs.selfplay.uncertainty import uncertainty_reward
from papergym.envs.selfplay.writing import (
    Brief,
    Constraint,
    QualityRubric,
    draw_brief,
    hidden_quality,
    parse_constraints,
)

ROLES: tuple[str, ...] = ("challenger", "solver", "judge")
OPEN_ENDED = "writing"
VERIFIABLE_DOMAINS: tuple[str, ...] = ("math", "code", "science")
"""The reasoning domains whose answers are compared exactly (their generators supply the material)."""
JudgeLabels = Literal["structural", "self_scored"]
Agreement = Literal["hard", "soft"]
_SCORES = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


@dataclass
class Round:
    """The state of one round.

    Attributes:
        domain: ``"writing"`` or a verifiable domain.
        material: the brief (writing) or the source problem (verifiable).
        task: the challenger's task text, once parsed.
        reference: the challenger's privileged reference answer.
        constraints: the task's subtasks (writing only).
        answers: the solver's answers so far.
        candidates: what the judge is asked to score (shuffled).
        pairs: the structural pairs, as ``(chosen index, rejected index, Pair)`` into ``candidates``.
        scores: the judge's scores, one per candidate.
        phase: the active role, or ``"done"``.
        rewards: each role's reward once the round is done.
        invalid: each role's last action was invalid.
    """

    domain: str
    material: Any
    task: str = ""
    reference: str = ""
    constraints: tuple[Constraint, ...] = ()
    answers: list[str] = field(default_factory=list)
    candidates: list[str] = field(default_factory=list)
    pairs: list[tuple[int, int, Pair]] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)
    phase: str = "challenger"
    rewards: dict[str, float] = field(default_factory=lambda: dict.fromkeys(ROLES, 0.0))
    invalid: dict[str, bool] = field(default_factory=lambda: dict.fromkeys(ROLES, False))
    solver_rewards: list[float] = field(default_factory=list)
    agreement: float = 0.0


class SelfPlayGame:
    """The rules of a round; see `papergym.envs.selfplay.selfplay_env.raw_env` for the arguments."""

    def __init__(
        self,
        *,
        domains: Sequence[str],
        group_size: int,
        judge_labels: JudgeLabels,
        agreement: Agreement,
        pair_kinds: Sequence[str],
        amplification: AmplificationMode,
        max_pairs: int,
        rubric: QualityRubric,
        format_penalty: float,
        max_chars: int,
    ) -> None:
        unknown = [d for d in domains if d != OPEN_ENDED and d not in VERIFIABLE_DOMAINS]
        if not domains or unknown:
            raise ValueError(f"domains must be a non-empty subset of {(OPEN_ENDED, *VERIFIABLE_DOMAINS)}")
        if group_size < 2:
            raise ValueError(
                f"group_size must be >= 2 (the solver reward compares answers), got {group_size}"
            )
        if judge_labels not in ("structural", "self_scored"):
            raise ValueError(f"judge_labels must be 'structural' or 'self_scored', got {judge_labels!r}")
        if agreement not in ("hard", "soft"):
            raise ValueError(f"agreement must be 'hard' or 'soft', got {agreement!r}")
        bad = set(pair_kinds) - {"role_asymmetry", "subtask_amplification"}
        if not pair_kinds or bad:
            raise ValueError(
                "pair_kinds must be a non-empty subset of ('role_asymmetry', 'subtask_amplification')"
            )
        if amplification not in ("drop", "amplify"):
            raise ValueError(f"amplification must be 'drop' or 'amplify', got {amplification!r}")
        self.domains = tuple(domains)
        self.group_size = int(group_size)
        self.judge_labels = judge_labels
        self.agreement = agreement
        self.pair_kinds = tuple(pair_kinds)
        self.amplification = amplification
        self.max_pairs = int(max_pairs)
        self.rubric = rubric
        self.format_penalty = float(format_penalty)
        self.max_chars = int(max_chars)
        self.round: Round | None = None
        self._rng: np.random.Generator = np.random.default_rng(0)

    # ------------------------------------------------------------------ round flow
    def start(self, rng: np.random.Generator, options: Mapping[str, Any]) -> None:
        """A new round: the domain (``options["domain"]`` or drawn) and its material."""
        self._rng = rng
        domain = options.get("domain")
        if domain is None:
            domain = self.domains[int(rng.integers(len(self.domains)))]
        elif domain not in self.domains:
            raise ValueError(f"options['domain']={domain!r} is not one of this env's domains {self.domains}")
        if domain == OPEN_ENDED:
            material: Any = draw_brief(rng)
        else:
            d = get_domain(domain)  # its generator draws from a random.Random seeded from rng
            material = d.generate(random.Random(int(rng.integers(2**62))), int(rng.integers(1, d.levels + 1)))
        self.round = Round(domain, material)

    @property
    def active(self) -> str:
        """The role whose action `act` consumes next (``"done"`` after the judge)."""
        return self._require().phase

    def act(self, action: Any) -> None:
        """Consume the active role's action."""
        r = self._require()
        text = action[: self.max_chars] if isinstance(action, str) else ""
        if r.phase == "challenger":
            self._challenger(r, text)
        elif r.phase == "solver":
            r.answers.append(text)
            if len(r.answers) == self.group_size:
                self._build_candidates(r)
                r.phase = "judge"
        elif r.phase == "judge":
            self._judge(r, text)
        else:
            raise ValueError("the round is over; reset the env")

    def _require(self) -> Round:
        if self.round is None:
            raise ValueError("call reset() before step()")
        return self.round

    def _challenger(self, r: Round, text: str) -> None:
        task = last_tagged(text, "task", ignore_case=True)
        reference = last_tagged(text, "reference", ignore_case=True)
        constraints = parse_constraints(task[1]) if task else None
        if task is None or reference is None or not task[1].strip() or not reference[1].strip():
            constraints = None
        if constraints is None:  # R-Zero's format gate: -1, and nothing to solve
            r.invalid["challenger"] = True
            r.rewards = {"challenger": -1.0, "solver": 0.0, "judge": 0.0}
            r.phase = "done"
            return
        r.task, r.reference = task[1].strip(), reference[1].strip()  # type: ignore[index]
        r.constraints = constraints if r.domain == OPEN_ENDED else ()
        r.phase = "solver"

    def _build_candidates(self, r: Round) -> None:
        answers = [a.strip() for a in r.answers]
        reference = r.reference if r.domain == OPEN_ENDED else f"\\boxed{{{r.reference}}}"
        pairs: list[Pair] = []
        if "role_asymmetry" in self.pair_kinds:
            blind = answers if r.domain == OPEN_ENDED else [a for a in answers if not self._matches(r, a)]
            pairs += role_asymmetry_pairs(r.task, reference, blind)
        if "subtask_amplification" in self.pair_kinds and r.constraints:
            pairs += subtask_amplification_pairs(
                r.task,
                [reference, *answers],
                r.constraints,
                mode=self.amplification,
                max_pairs=self.max_pairs,
            )
        texts = list(
            dict.fromkeys([reference, *answers, *(t for p in pairs for t in (p.chosen, p.rejected))])
        )
        order = [int(i) for i in self._rng.permutation(len(texts))]
        r.candidates = [texts[i] for i in order]
        index = {t: i for i, t in enumerate(r.candidates)}
        r.pairs = [(index[p.chosen], index[p.rejected], p) for p in pairs]

    def _judge(self, r: Round, text: str) -> None:
        tagged = last_tagged(text, "scores", ignore_case=True)
        scores = [float(x) for x in _SCORES.findall(tagged[1])] if tagged else []
        valid = len(scores) == len(r.candidates) and all(np.isfinite(scores))
        r.invalid["judge"] = not valid
        r.scores = scores if valid else [0.0] * len(r.candidates)
        if valid and self.judge_labels == "self_scored":
            relabelled = self_scored(
                [p for _, _, p in r.pairs],
                [r.scores[c] for c, _, _ in r.pairs],
                [r.scores[j] for _, j, _ in r.pairs],
            )
            r.pairs = [
                (c, j, p) if p == q else (j, c, q) for (c, j, p), q in zip(r.pairs, relabelled, strict=True)
            ]
        judge_reward = pair_accuracy(
            [r.scores[c] for c, _, _ in r.pairs], [r.scores[j] for _, j, _ in r.pairs]
        )
        index = {t: i for i, t in enumerate(r.candidates)}
        answer_scores = [r.scores[index[a.strip()]] for a in r.answers]
        ref_score = r.scores[index[r.reference if r.domain == OPEN_ENDED else f"\\boxed{{{r.reference}}}"]]
        if r.domain == OPEN_ENDED:
            r.solver_rewards = bt_win_rates(answer_scores)
            margins = np.asarray(answer_scores) - ref_score
            soft = 1.0 / (1.0 + np.exp(-np.clip(margins, -50.0, 50.0)))
            r.agreement = float(np.mean(margins > 0 if self.agreement == "hard" else soft))
        else:
            hits = [float(self._matches(r, a)) for a in r.answers]
            r.solver_rewards, r.agreement = hits, float(np.mean(hits))
        r.solver_rewards = [
            -self.format_penalty if not a.strip() else x
            for a, x in zip(r.answers, r.solver_rewards, strict=True)
        ]
        r.invalid["solver"] = any(not a.strip() for a in r.answers)
        r.rewards = {
            "challenger": uncertainty_reward(r.agreement),
            "solver": float(np.mean(r.solver_rewards)),
            "judge": judge_reward if valid else -self.format_penalty,
        }
        r.phase = "done"

    def _matches(self, r: Round, answer: str) -> bool:
        extracted = extract_answer(answer)
        given = (extracted if extracted is not None else answer).strip()
        return bool(given) and canonical_answer(given) == canonical_answer(r.reference)

    # ------------------------------------------------------------------ views
    def observation(self, role: str) -> str:
        """What ``role`` sees now."""
        r = self._require()
        if r.phase == "done":
            return f"Role: {role}. The round is over. Your reward: {r.rewards[role]:.4f}."
        if role != r.phase:
            return f"Role: {role}. Waiting for the {r.phase}."
        if role == "challenger":
            return self._challenger_prompt(r)
        if role == "solver":
            fmt = "" if r.domain == OPEN_ENDED else "\n\nPut your final answer in \\boxed{}."
            return f"Role: solver. Domain: {r.domain}.\n\nTask:\n{r.task}{fmt}"
        listing = "\n".join(f"[{i + 1}]\n{c}" for i, c in enumerate(r.candidates))
        return (
            f"Role: judge. Domain: {r.domain}.\n\nTask:\n{r.task}\n\nCandidates:\n{listing}\n\n"
            f"Score each of the {len(r.candidates)} candidates (higher is better), in order, as "
            "<scores>s1 s2 ...</scores>."
        )

    def _challenger_prompt(self, r: Round) -> str:
        tail = (
            "Write a task for the solver and your own reference answer, as\n"
            "<task>...</task>\n<reference>...</reference>"
        )
        if r.domain == OPEN_ENDED:
            brief: Brief = r.material
            menu = "\n".join(c.render() for c in brief.menu)
            return (
                f"Role: challenger. Domain: writing (open-ended).\nTopic: {brief.topic}.\n"
                f"Source passage (only you see it):\n{brief.source}\n\n"
                f"Constraints you may impose, one per line of the task as `kind: arg`:\n{menu}\n\n{tail}"
            )
        return (
            f"Role: challenger. Domain: {r.domain} (verifiable).\n"
            f"Source problem (only you see it):\n{r.material.prompt}\n"
            f"Its answer: {r.material.answer}\n\n{tail}"
        )

    def info(self, role: str, trainable: bool) -> dict[str, Any]:
        """``role``'s info now (the round's outcome once it is done)."""
        r = self._require()
        info: dict[str, Any] = {K.DOMAIN: r.domain, K.PHASE: r.phase, K.TRAINABLE: trainable}
        if r.phase != "done":
            return info
        info[K.INVALID_ACTION] = r.invalid[role]
        info[K.REWARD_COMPONENTS] = {role: r.rewards[role]}
        if role == "challenger":
            info[K.PARSED_ACTION] = (
                None if r.invalid["challenger"] else {"task": r.task, "reference": r.reference}
            )
            info[K.SOLVER_AGREEMENT] = r.agreement
        elif role == "solver" and r.answers:
            info[K.SOLVER_REWARDS] = list(r.solver_rewards)
            if r.domain == OPEN_ENDED:
                info[K.HIDDEN_QUALITY] = [self.quality(a) for a in r.answers]
        elif role == "judge" and r.candidates:
            info[K.CANDIDATES] = list(r.candidates)
            info[K.JUDGE_SCORES] = list(r.scores)
            info[K.PAIRS] = [{"chosen_index": c, "rejected_index": j, **p.as_dict()} for c, j, p in r.pairs]
            if r.domain == OPEN_ENDED:
                info[K.HIDDEN_QUALITY] = [self.quality(c) for c in r.candidates]
        return info

    def quality(self, answer: str) -> float:
        """The hidden quality of ``answer`` for the current open-ended round (evaluation only)."""
        r = self._require()
        return hidden_quality(answer, r.constraints, r.material, self.rubric)

    # ------------------------------------------------------------------ reference actions
    def judge_action(self, judge: PairwiseJudge, *, seed: int | None = None) -> str:
        """The action ``judge`` takes on the current candidates (``<scores>...</scores>``)."""
        r = self._require()
        scores = judge.scores(r.task, r.candidates, seed=seed) if r.candidates else []
        return "<scores>" + " ".join(f"{s:.6g}" for s in scores) + "</scores>"
