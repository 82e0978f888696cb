"""What the small learned (non-LM) policies share: softmax tables trained with the clipped GRPO loss.

A policy is a set of named softmax heads (`SoftmaxHeads`); an episode's `Sample` is the text its decisions
realise plus the decisions themselves (the "tokens" whose log-probabilities the clipped GRPO loss of
`papergym.baselines.losses` trains). `SoftmaxGRPOArgs` is the training budget every such trainer takes
(`papergym.baselines.memory_skimmer`, `papergym.baselines.search_hopper`) and `make_env` the one env it
plays. The J-Zero policies (`papergym.baselines.jzero_policies`) use the heads directly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from papergym.baselines.losses import DPO_BETA, clipped_policy_loss, dpo_loss, group_advantages
from papergym.baselines.run import make_envs, parse_kwargs
from papergym.core.errors import require
from papergym.core.trajectory import Trajectory
from papergym.credit import resolve

if TYPE_CHECKING:  # torch is imported where it is used, so importing this module stays light
    import torch


Decision = tuple[str, int, int]
"""One draw: ``(head, row, choice)``."""
Paths = Sequence[Sequence[Decision]]
"""The decision paths that each produce one output text (its probability is their sum)."""


@dataclass
class Sample:
    """One sampled action: the text and the decisions ``(head, row, choice)`` that produced it."""

    text: str
    decisions: list[tuple[str, int, int]] = field(default_factory=list)


class SoftmaxHeads:
    """Named tables of logits (``rows x choices``), sampled with a numpy generator, trained with GRPO.

    Args:
        heads: ``name -> (rows, choices)``.
        lr: the GRPO optimizer's step size.
        epochs: gradient steps per `update` on the same samples (the first has ratio 1; later ones clip).
        clip: the clip range ε of the GRPO loss.
        optimizer: `OPTIMIZERS`: ``adam`` (default) or ``sgd``. Adam scales each logit's step by that
            logit's own gradient history, so on a table whose rows are each reached by few decisions a
            positive per-decision weight (a credit rule's) barely changes the step; plain gradient
            descent keeps the weights' magnitudes. Behaviour cloning and DPO use Adam either way.
    """

    OPTIMIZERS = ("adam", "sgd")

    def __init__(
        self,
        heads: dict[str, tuple[int, int]],
        *,
        lr: float = 0.1,
        epochs: int = 4,
        clip: float = 0.2,
        optimizer: str = "adam",
    ):
        torch = require("torch", "llm")
        if optimizer not in self.OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {self.OPTIMIZERS}, got {optimizer!r}")
        self.logits = {name: torch.zeros(rows, n, requires_grad=True) for name, (rows, n) in heads.items()}
        make = torch.optim.Adam if optimizer == "adam" else torch.optim.SGD
        self.optimizer = make(list(self.logits.values()), lr=lr)
        self.epochs, self.clip = int(epochs), float(clip)
        self._probs: dict[tuple[str, int], np.ndarray] = {}  # draw's normalised rows until the next update

    def draw(
        self, head: str, row: int, rng: np.random.Generator, decisions: list[tuple[str, int, int]]
    ) -> int:
        """Sample a choice of ``head`` at ``row`` and record it in ``decisions``."""
        probs = self._probs.get((head, row))
        if probs is None:
            torch = require("torch", "llm")
            with torch.no_grad():
                probs = torch.softmax(self.logits[head][row], dim=0).double().numpy()
            probs = self._probs[head, row] = probs / probs.sum()
        choice = int(rng.choice(len(probs), p=probs))
        decisions.append((head, row, choice))
        return choice

    def probabilities(self, head: str, row: int = 0) -> list[float]:
        """The current choice probabilities of one row (for logging)."""
        torch = require("torch", "llm")
        with torch.no_grad():
            return [float(p) for p in torch.softmax(self.logits[head][row], dim=0)]

    def imitate(self, samples: Sequence[Sample], *, steps: int, lr: float) -> float:
        """Behaviour cloning: ``steps`` Adam steps (a fresh optimizer of step size ``lr``, so GRPO's keeps
        no state from it) on the mean negative log-probability of the samples' decisions; the last loss."""
        if not any(s.decisions for s in samples):
            return 0.0

        def nll() -> torch.Tensor:
            logp, mask = self._logp(samples)
            return -(logp * mask).sum() / mask.sum()

        return self._descend(nll, steps=steps, lr=lr)

    def imitate_outputs(self, outputs: Sequence[Paths], *, steps: int, lr: float) -> float:
        """Behaviour cloning on outputs given as their decision paths (`path_logprobs`): as `imitate`, on
        the mean negative log-probability of each output (the sum over its paths)."""
        if not outputs:
            return 0.0
        return self._descend(lambda: -self.path_logprobs(outputs).mean(), steps=steps, lr=lr)

    def _descend(self, loss_fn: Callable[[], torch.Tensor], *, steps: int, lr: float) -> float:
        """``steps`` steps of a fresh Adam (step size ``lr``) on ``loss_fn()``; the last loss."""
        torch = require("torch", "llm")
        if steps <= 0:
            return 0.0
        optimizer = torch.optim.Adam(list(self.logits.values()), lr=lr)
        loss = torch.zeros(())
        try:
            for _ in range(steps):
                loss = loss_fn()
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        finally:  # the logits moved: draws must read them afresh
            self._probs.clear()
        return float(loss.detach())

    @staticmethod
    def _advantages(
        samples: Sequence[Sample], advantages: Sequence[float] | Sequence[Sequence[float]]
    ) -> torch.Tensor:
        """``(B,)`` from one advantage per sample, ``(B, T)`` (zero-padded) from one per decision."""
        torch = require("torch", "llm")
        if all(isinstance(a, (int, float)) for a in advantages):
            return torch.tensor([float(a) for a in advantages])  # type: ignore[arg-type]
        width = max(1, max(len(s.decisions) for s in samples))
        adv = torch.zeros(len(samples), width)
        for i, (sample, values) in enumerate(zip(samples, advantages, strict=True)):
            if not isinstance(values, Sequence) or len(values) != len(sample.decisions):
                raise ValueError("per-decision advantages need one value per decision of every sample")
            adv[i, : len(values)] = torch.tensor([float(v) for v in values])
        return adv

    def _logp(self, samples: Sequence[Sample]) -> tuple[torch.Tensor, torch.Tensor]:
        torch = require("torch", "llm")
        width = max(1, max(len(s.decisions) for s in samples))
        logp = torch.zeros(len(samples), width)
        mask = torch.zeros(len(samples), width)
        for head, table in self.logits.items():  # one gather per head: (sample, position, row, choice)
            where = [
                (i, t, row, choice)
                for i, s in enumerate(samples)
                for t, (name, row, choice) in enumerate(s.decisions)
                if name == head
            ]
            if where:
                i, t, row, choice = torch.tensor(where).T
                logp = logp.index_put((i, t), torch.log_softmax(table, dim=1)[row, choice])
                mask[i, t] = 1.0
        return logp, mask

    def path_logprobs(self, outputs: Sequence[Paths]) -> torch.Tensor:
        """``[N]``: each output's log-probability, the log-sum-exp over its paths of the sum of their
        decisions' log-probabilities (an output several draw sequences produce: a completion's text)."""
        torch = require("torch", "llm")
        logsoftmax = {head: torch.log_softmax(table, dim=1) for head, table in self.logits.items()}
        out = []
        for paths in outputs:
            if not paths:
                raise ValueError("an output needs at least one decision path")
            per_path = [sum((logsoftmax[h][r, c] for h, r, c in path), torch.zeros(())) for path in paths]
            out.append(torch.logsumexp(torch.stack(per_path), dim=0))
        return torch.stack(out) if out else torch.zeros(0)

    def prefer(
        self, pairs: Sequence[tuple[Paths, Paths]], *, steps: int, lr: float, beta: float = DPO_BETA
    ) -> float:
        """DPO (`papergym.baselines.losses.dpo_loss`) on ``(chosen, rejected)`` outputs, each given as its
        decision paths; the reference is the logits at the call, the optimizer a fresh Adam of step size
        ``lr`` (GRPO's keeps no state from it); ``steps`` full-batch steps; the last loss."""
        torch = require("torch", "llm")
        if not pairs:
            return 0.0
        chosen, rejected = [c for c, _ in pairs], [r for _, r in pairs]
        with torch.no_grad():
            ref_chosen, ref_rejected = self.path_logprobs(chosen), self.path_logprobs(rejected)
        return self._descend(
            lambda: dpo_loss(
                self.path_logprobs(chosen), self.path_logprobs(rejected), ref_chosen, ref_rejected, beta
            ),
            steps=steps,
            lr=lr,
        )

    def update(
        self, samples: Sequence[Sample], advantages: Sequence[float] | Sequence[Sequence[float]]
    ) -> float:
        """GRPO steps on ``samples``, one advantage each, or one per decision (a list per sample, as an
        advantage hook gives them); the last loss (0.0 with nothing to train)."""
        torch = require("torch", "llm")
        if len(samples) != len(advantages):
            raise ValueError("one advantage (or one list of them) per sample")
        if not samples or not any(s.decisions for s in samples):
            return 0.0
        adv = self._advantages(samples, advantages)
        with torch.no_grad():
            old, mask = self._logp(samples)
        loss = torch.zeros(())
        try:
            for _ in range(self.epochs):
                logp, _ = self._logp(samples)
                loss, _ = clipped_policy_loss(
                    logp, old, adv, mask, eps_low=self.clip, eps_high=self.clip, norm="seq"
                )
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
        finally:  # the logits may have moved: draws must read them afresh
            self._probs.clear()
        return float(loss.detach())


@dataclass
class SoftmaxGRPOArgs:
    """The GRPO budget of a softmax-head policy on one env."""

    env: str = ""
    """The env id the policy trains on."""
    env_kw: list[str] = field(default_factory=list)
    """The env's kwargs as key=value (a value is parsed as JSON when it can be)."""
    steps: int = 60
    """GRPO updates."""
    tasks_per_step: int = 8
    """Tasks (groups) per update."""
    group_size: int = 8
    """Episodes per task (G)."""
    lr: float = 0.1
    """Adam step size on the logits (inferred, as the J-Zero policies')."""
    epochs: int = 4
    """Gradient steps per update on the same episodes."""
    seed: int = 0
    """Seeds the training tasks and the sampling."""


def make_env(
    env_id: str,
    env_kw: Sequence[str],
    wrapper: str | None = None,
    wrapper_kw: Sequence[str] = (),
    *,
    objects: Mapping[str, Any] | None = None,
) -> Any:
    """One env of ``env_id`` with ``env_kw`` (key=value strings) and ``objects`` (kwargs no string can
    say, e.g. a `Critic`), wrapped in ``wrapper`` when one is named (a short name of
    `papergym.wrappers.WRAPPERS` or module:Class) with ``wrapper_kw`` (key=value)."""
    from papergym.wrappers import WRAPPERS

    if wrapper_kw and wrapper is None:
        raise ValueError("wrapper_kw configures a wrapper: name the wrapper")
    (env,) = make_envs(env_id, parse_kwargs(list(env_kw)) | dict(objects or {}), 1)
    return env if wrapper is None else resolve(wrapper, WRAPPERS, env=env, **parse_kwargs(list(wrapper_kw)))


def decision_advantages(
    groups: Sequence[Sequence[Trajectory]],
    rewards: Any,
    steps_of: Sequence[Sequence[int]],
    hook: Any,
) -> list[list[float]]:
    """One advantage per decision: the member's group-normalised advantage, or the hook's value at the
    step the decision was made (``action_lengths`` are 1: a decision is one action)."""
    adv = group_advantages(rewards)
    out: list[list[float]] = []
    for g, group in enumerate(groups):
        for m, traj in enumerate(group):
            a = float(adv[g, m])
            per_step = (
                [a] * len(traj.steps)
                if hook is None
                else list(hook(traj, a, action_lengths=[1] * len(traj.steps), group=group, batch=groups))
            )
            out.append([per_step[s] for s in steps_of[g * len(group) + m]])
    return out


PlayFn = Callable[..., "tuple[Trajectory, Sample, list[int]]"]
"""``play(env, policy, rng, *, seed, options)``: one episode, its decisions and each decision's step."""


def sample_groups(
    env: Any,
    policy: Any,
    play: PlayFn,
    rng: np.random.Generator,
    args: SoftmaxGRPOArgs,
    options: Mapping[str, Any],
) -> tuple[list[list[Trajectory]], list[Sample], list[list[int]]]:
    """One GRPO step's episodes: ``args.tasks_per_step`` task seeds drawn from ``rng``, ``args.group_size``
    episodes of each (``play``, with reset ``options``), as the groups of trajectories, every episode's
    `Sample` and its decisions' steps (flat, in group order)."""
    groups: list[list[Trajectory]] = []
    samples: list[Sample] = []
    steps_of: list[list[int]] = []
    for task_seed in rng.integers(0, 2**31 - 1, size=args.tasks_per_step):
        groups.append([])
        for _ in range(args.group_size):
            traj, sample, at = play(env, policy, rng, seed=int(task_seed), options=options)
            groups[-1].append(traj)
            samples.append(sample)
            steps_of.append(at)
    return groups, samples, steps_of
