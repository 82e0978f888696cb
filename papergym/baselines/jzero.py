"""The J-Zero co-evolution loop over ``papergym/SelfPlay-v0`` (papers/training.md §1.6, inferred).

Per iteration k:

1. **Challenger step**: play ``briefs`` rounds x ``challenger_group`` challenger samples per brief
   (the same seed, so a group shares its material) against the frozen solver and judge; reward each
   task with `papergym.credit.rzero.RZeroReward` over the batch; GRPO update of the challenger.
2. **Task filtering**: keep the tasks whose p̂ lies in the informative band (R-Zero keeps
   3..7 agreeing answers of 10, p̂ in [0.3, 0.7] [S: paperium]; with G answers the band is an argument).
3. **Judge step**: a Bradley–Terry update of the judge on the preference pairs of the challenger step's
   rounds (all parseable ones, or only the kept ones: ``judge_pool``), labelled by construction, or by
   the judge itself under ``judge_labels="self_scored"``.
4. **Solver step**: replay each kept task, the solver answers G times, the updated judge scores;
   GRPO update of the solver on ``info["solver_rewards"]``.

The policies are pluggable: anything with ``act(observation, rng) -> Sample`` and
``update(samples, advantages)`` (`ChallengerPolicy` and `SolverPolicy` are small trainable ones), and
any `PairwiseJudge` (trained when it has ``update(pairs)``). A role the env marks
``trainable=False`` (``env_kwargs={"trainable": {...}}``) is frozen. Evaluation each iteration: the hidden
quality of the solver's answers to fixed held-out tasks, and the judge's agreement with the hidden
quality (pairwise concordance on a fixed probe set of texts).

Run: ``papergym train jzero --iterations 10`` (`Args`, `main`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from papergym.baselines.jzero_policies import (
    BODIES,
    LENGTHS,
    TREATMENTS,
    ChallengerPolicy,
    Sample,
    SolverPolicy,
    realize_answer,
)
from papergym.baselines.losses import group_advantages
from papergym.baselines.run import RunArgs, parse_kwargs, start_run
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.trajectory import Step, Trajectory
from papergym.credit.rzero import RZeroReward
from papergym.envs.selfplay.judges import BTJudge, PairwiseJudge
from papergym.envs.selfplay.pairs import Pair
from papergym.envs.selfplay.selfplay_env import raw_env
from papergym.envs.selfplay.writing import Brief

logger = logging.getLogger(__name__)


class TrainablePolicy(Protocol):
    """A challenger or solver policy of the loop."""

    def act(self, observation: str, rng: np.random.Generator) -> Sample: ...

    def update(self, samples: Sequence[Sample], advantages: Sequence[float]) -> float: ...


@dataclass(frozen=True)
class JZeroConfig:
    """The loop's settings (all inferred at this scale; papers/training.md §1.3 / §1.6 for the shape).

    Attributes:
        briefs: distinct materials per challenger step.
        challenger_group: challenger samples per brief (R-Zero's questioner uses rollout.n = 4).
        group_size: G, the solver's answers per task.
        band: the informative band of p̂ (inclusive).
        judge_labels: ``"structural"`` or ``"self_scored"``.
        agreement: the env's p̂ for open-ended tasks, ``"hard"`` or ``"soft"`` (see `raw_env`; soft by
            default: once the judge prefers references by a wide margin, the hard p̂ is 0 everywhere and
            the band empties).
        judge_pool: ``"all"`` trains the judge on the pairs of every parseable round of the challenger
            step, ``"kept"`` only on the rounds in the band (inferred; §1.6 leaves it open, and an empty
            band would starve the judge).
        domains: the env's domains.
        eval_tasks: held-out tasks for the hidden-quality measurement.
        probes: probe texts per held-out task for the judge-agreement measurement.
        seed: seeds the env draws, the policies' sampling and the judge's initial weights.
    """

    briefs: int = 8
    challenger_group: int = 4
    group_size: int = 8
    band: tuple[float, float] = (0.2, 0.8)
    judge_labels: str = "structural"
    judge_pool: str = "all"
    agreement: str = "soft"
    domains: tuple[str, ...] = ("writing",)
    eval_tasks: int = 16
    probes: int = 12
    seed: int = 0


@dataclass
class IterationStats:
    """What one iteration measured (all means over the iteration's rounds)."""

    iteration: int
    hidden_quality: float
    judge_agreement: float
    challenger_reward: float
    solver_reward: float
    kept_tasks: int
    judge_pairs: int
    judge_loss: float


@dataclass
class RoundRecord:
    """One played round: the samples and every role's final info."""

    seed: int
    challenger: Sample
    answers: list[Sample]
    infos: dict[str, Mapping[str, Any]]
    prompts: dict[str, str] = dataclasses.field(default_factory=dict)
    """What the challenger and the solver saw."""

    def trajectory(self) -> Trajectory:
        """The round as one episode for `papergym view`: the challenger's step, then each answer (its
        reward the solver's per-answer reward)."""
        rewards = list(self.infos["solver"].get(K.SOLVER_REWARDS) or [0.0] * len(self.answers))
        steps = [
            Step(self.prompts.get("challenger", ""), self.challenger.text, 0.0, self.infos["challenger"])
        ]
        steps += [
            Step(self.prompts.get("solver", ""), a.text, float(x), {})
            for a, x in zip(self.answers, rewards, strict=True)
        ]
        success = bool(self.infos["solver"].get(K.SUCCESS, False))
        return Trajectory(str(self.seed), self.seed, steps=steps, success=success, terminated=True)


class JZeroLoop:
    """Co-evolves a challenger, a solver and a judge over ``papergym/SelfPlay-v0``.

    Args:
        config: the loop's settings.
        challenger: the challenger policy (default: a fresh `ChallengerPolicy`).
        solver: the solver policy (default: a fresh `SolverPolicy`).
        judge: the judge (default: a `BTJudge` seeded from ``config.seed``).
        env_kwargs: extra `raw_env` arguments.

    >>> loop = JZeroLoop(JZeroConfig(briefs=2, challenger_group=2, group_size=2, eval_tasks=2, probes=3))
    >>> [s.iteration for s in loop.run(1)]
    [0]
    """

    def __init__(
        self,
        config: JZeroConfig = JZeroConfig(),
        *,
        challenger: TrainablePolicy | None = None,
        solver: TrainablePolicy | None = None,
        judge: PairwiseJudge | None = None,
        env_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        low, high = config.band
        if not 0.0 <= low <= high <= 1.0:
            raise ValueError(f"band must satisfy 0 <= low <= high <= 1, got {config.band}")
        if config.judge_pool not in ("all", "kept"):
            raise ValueError(f"judge_pool must be 'all' or 'kept', got {config.judge_pool!r}")
        self.config = config
        self.challenger = challenger or ChallengerPolicy()
        self.solver = solver or SolverPolicy()
        self.judge = judge or BTJudge(seed=config.seed)
        self.env = raw_env(
            domains=config.domains,
            group_size=config.group_size,
            judge=self.judge,
            judge_labels=config.judge_labels,  # type: ignore[arg-type]
            agreement=config.agreement,  # type: ignore[arg-type]
            **dict(env_kwargs or {}),
        )
        self.rng = np.random.default_rng(config.seed)
        self.reward = RZeroReward()
        self.history: list[IterationStats] = []
        self._eval = self._eval_set()
        self.eval_trace: Path | None = None
        """Where `evaluate` writes its rounds for `papergym view` (None: nowhere)."""

    # ------------------------------------------------------------------ rounds
    def play(
        self, seed: int, challenger_text: str | None = None, *, domain: str | None = None
    ) -> RoundRecord:
        """One round on ``seed`` (in ``domain``, else the one the env draws): the challenger's sample (or
        ``challenger_text``), G answers, the judge."""
        env = self.env
        env.reset(seed=seed, options={"domain": domain} if domain else None)
        prompts = {"challenger": env.observe("challenger")}
        if challenger_text is None:
            challenge = self.challenger.act(prompts["challenger"], self.rng)
        else:
            challenge = Sample(challenger_text)
        env.step(challenge.text)
        answers: list[Sample] = []
        if env.game.active == "solver":
            prompt = prompts["solver"] = env.observe("solver")
            for _ in range(self.config.group_size):
                answers.append(self.solver.act(prompt, self.rng))
                env.step(answers[-1].text)
            env.step(env.judge_action(seed=seed))
        infos: dict[str, Mapping[str, Any]] = {a: dict(env.infos[a]) for a in env.possible_agents}
        return RoundRecord(seed, challenge, answers, infos, prompts)

    # ------------------------------------------------------------------ one iteration
    def iteration(self) -> IterationStats:
        """One co-evolution iteration (challenger, filter, judge, solver) and its evaluation."""
        torch = require("torch", "llm")
        cfg, k = self.config, len(self.history)
        seeds = [int(s) for s in self.rng.integers(2**31, size=cfg.briefs)]
        rounds = [self.play(s) for s in seeds for _ in range(cfg.challenger_group)]
        trajectories = [
            Trajectory(str(r.seed), r.seed, steps=[Step("", r.challenger.text, 0.0, r.infos["challenger"])])
            for r in rounds
        ]
        rewards = self.reward(trajectories)
        adv = group_advantages(torch.tensor(rewards).view(cfg.briefs, cfg.challenger_group))
        if self.env.trainable["challenger"]:
            self.challenger.update([r.challenger for r in rounds], adv.flatten().tolist())

        low, high = cfg.band
        kept = [
            r
            for r in rounds
            if r.infos["challenger"].get(K.PARSED_ACTION) is not None
            and low <= float(r.infos["challenger"][K.SOLVER_AGREEMENT]) <= high
        ]
        pool = kept if cfg.judge_pool == "kept" else rounds
        pairs = [_pair(p) for r in pool for p in r.infos["judge"].get(K.PAIRS, [])]
        update = getattr(self.judge, "update", None) if self.env.trainable["judge"] else None
        judge_loss = float(update(pairs)) if callable(update) and pairs else 0.0

        solver_samples: list[Sample] = []
        solver_adv: list[float] = []
        solver_rewards: list[float] = []
        for r in kept:
            replay = self.play(r.seed, challenger_text=r.challenger.text)
            got = replay.infos["solver"].get(K.SOLVER_REWARDS)
            if not got:
                continue
            solver_rewards += list(got)
            solver_samples += replay.answers
            solver_adv += group_advantages(torch.tensor([got], dtype=torch.float32))[0].tolist()
        if self.env.trainable["solver"]:
            self.solver.update(solver_samples, solver_adv)

        quality, agreement = self.evaluate()
        stats = IterationStats(
            iteration=k,
            hidden_quality=quality,
            judge_agreement=agreement,
            challenger_reward=float(np.mean(rewards)),
            solver_reward=float(np.mean(solver_rewards)) if solver_rewards else 0.0,
            kept_tasks=len(kept),
            judge_pairs=len(pairs),
            judge_loss=judge_loss,
        )
        logger.info("J-Zero iteration %d: %s", k, asdict(stats))
        self.history.append(stats)
        return stats

    def run(self, iterations: int) -> list[IterationStats]:
        """``iterations`` iterations; returns their stats."""
        return [self.iteration() for _ in range(iterations)]

    # ------------------------------------------------------------------ evaluation
    def _eval_set(self) -> list[tuple[int, str, list[str]]]:
        """Held-out (seed, task, probe texts): a fixed task per brief (its first three menu constraints,
        the topic hinted) and probe answers from uniformly random solver decisions."""
        rng = np.random.default_rng(10_000 + self.config.seed)
        out = []
        for i in range(self.config.eval_tasks):
            seed = 1_000_000 + i
            self.env.reset(
                seed=seed, options={"domain": "writing"} if "writing" in self.config.domains else None
            )
            if self.env.game.round is None or self.env.game.round.domain != "writing":
                continue
            brief = self.env.game.round.material
            task, text = fixed_challenge(brief)
            probes = [
                realize_answer(
                    task,
                    LENGTHS[int(rng.integers(len(LENGTHS)))],
                    BODIES[int(rng.integers(len(BODIES)))],
                    [(TREATMENTS[int(rng.integers(len(TREATMENTS)))], c.kind, c.arg) for c in brief.menu[:3]],
                )
                for _ in range(self.config.probes)
            ]
            out.append((seed, text, probes))
        return out

    def evaluate(self) -> tuple[float, float]:
        """Mean hidden quality of the solver's answers on the held-out tasks, and the judge's pairwise
        concordance with the hidden quality on the probe texts (pairs of equal quality skipped). With
        ``eval_trace`` set the held-out rounds are written there (`papergym.viewer.write_episodes`)."""
        qualities: list[float] = []
        played: list[Trajectory] = []
        concordant = total = 0
        for seed, text, probes in self._eval:
            record = self.play(seed, challenger_text=text, domain="writing")
            played.append(record.trajectory())
            qualities += [self.env.hidden_quality(a.text) for a in record.answers]
            task = self.env.game.round.task  # type: ignore[union-attr]
            q = [self.env.hidden_quality(p) for p in probes]
            s = self.judge.scores(task, probes)
            for i in range(len(probes)):
                for j in range(i + 1, len(probes)):
                    if abs(q[i] - q[j]) > 1e-9:
                        total += 1
                        concordant += (q[i] - q[j]) * (s[i] - s[j]) > 0
        if self.eval_trace is not None:
            from papergym.viewer.recording import write_episodes

            write_episodes(self.eval_trace, played, env_id="papergym/SelfPlay-v0")
        return (float(np.mean(qualities)) if qualities else 0.0, concordant / total if total else 0.0)


def fixed_challenge(brief: Brief) -> tuple[str, str]:
    """A fixed held-out task for ``brief`` and the challenger action stating it: the topic with three of
    its words hinted and the first three menu constraints; the reference is the source passage.

    >>> from papergym.envs.selfplay.writing import Constraint, TOPICS
    >>> fixed_challenge(Brief("river", TOPICS["river"], "src", (Constraint("include", "reeds"),)))[0]
    'Write a short piece about the river: current, bridge, reeds.\\ninclude: reeds'
    """
    task = f"Write a short piece about the {brief.topic}: {', '.join(brief.vocabulary[1:4])}.\n"
    task += "\n".join(c.render() for c in brief.menu[:3])
    return task, f"<task>{task}</task>\n<reference>{brief.source}</reference>"


def _pair(d: Mapping[str, Any]) -> Pair:
    return Pair(d["task"], d["chosen"], d["rejected"], d["kind"], d.get("detail", ""))


@dataclass
class Args(RunArgs):
    """The J-Zero loop (``papergym train jzero``): the `JZeroConfig` settings and the shared run flags."""

    env: str = "papergym/SelfPlay-v0"
    """The env (the loop plays ``papergym/SelfPlay-v0`` only; ``env_kw`` go to its `raw_env`)."""
    out: str = "runs/jzero"
    """The run directory (metrics.jsonl, checkpoints/, curves.png, summary.json)."""
    iterations: int = 10
    """Co-evolution iterations (inferred)."""
    eval_trace: bool = True
    """Record the latest iteration's held-out rounds for `papergym view` (out/eval_after.jsonl)."""
    briefs: int = 8
    """Distinct materials per challenger step."""
    challenger_group: int = 4
    """Challenger samples per brief (R-Zero's questioner uses rollout.n = 4)."""
    group_size: int = 8
    """G, the solver's answers per task."""
    band: tuple[float, float] = (0.2, 0.8)
    """The informative band of p̂ (inclusive; inferred)."""
    judge_labels: Literal["structural", "self_scored"] = "structural"
    """Preference-pair labels: by construction, or by the judge itself."""
    judge_pool: Literal["all", "kept"] = "all"
    """Train the judge on every parseable round's pairs or only on the kept rounds' (inferred)."""
    agreement: Literal["hard", "soft"] = "soft"
    """The env's p̂ for open-ended tasks (see `JZeroConfig`)."""
    domains: tuple[str, ...] = ("writing",)
    """The env's domains."""
    eval_tasks: int = 16
    """Held-out tasks for the hidden-quality measurement."""
    probes: int = 12
    """Probe texts per held-out task for the judge-agreement measurement."""


def build_loop(args: Args, state: Mapping[str, Any] | None = None) -> JZeroLoop:
    """The `JZeroLoop` that ``args`` describe (its `JZeroConfig` fields and ``env_kw``), starting from the
    policies and judge of a checkpoint's ``state`` where given (fresh ones otherwise)."""
    fields = {f.name for f in dataclasses.fields(JZeroConfig)}
    config = JZeroConfig(**{k: v for k, v in asdict(args).items() if k in fields})
    state = state or {}
    return JZeroLoop(
        config,
        challenger=state.get("challenger"),
        solver=state.get("solver"),
        judge=state.get("judge"),
        env_kwargs=parse_kwargs(args.env_kw),
    )


def main(args: Args) -> dict[str, Any]:
    """Run the loop; returns the last iteration's stats and the run directory (also ``out/summary.json``).

    A checkpoint holds the policies, the judge, the loop's generator and its history, so ``--resume``
    continues a stopped run exactly.
    """
    require("torch", "llm")
    if args.env != "papergym/SelfPlay-v0":
        raise ValueError(f"jzero plays papergym/SelfPlay-v0 only, got --env {args.env}")
    run = start_run(args, total_steps=args.iterations, desc="jzero")
    state = run.resumed_state or {}
    loop = build_loop(args, state)
    if args.eval_trace:  # the latest iteration's evaluation, as the other trainers' eval_after.jsonl
        loop.eval_trace = run.out / "eval_after.jsonl"
    if state:
        loop.rng.bit_generator.state = state["rng"]
        loop.history = list(state["history"])
    for k in range(run.start_step, args.iterations):
        stats = asdict(loop.iteration())
        run.log(k, {key: value for key, value in stats.items() if key != "iteration"})
        run.checkpoint(k + 1, extra=_loop_state(loop))
    run.finish()
    summary = {"out": str(run.out), "args": asdict(args), "history": [asdict(s) for s in loop.history]}
    (run.out / "summary.json").write_text(json.dumps(summary, indent=1))
    last = asdict(loop.history[-1]) if loop.history else {}
    return {**summary, **last}


def _loop_state(loop: JZeroLoop) -> dict[str, Any]:
    return {
        "challenger": loop.challenger,
        "solver": loop.solver,
        "judge": loop.judge,
        "rng": loop.rng.bit_generator.state,
        "history": list(loop.history),
    }
