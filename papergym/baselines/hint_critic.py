"""CAFE's critic role on the search hopper: a learned critic played by the hopper's own parameters, and
RDPO on it (papers/envs.md §3.3).

CAFE trains one model as agent and critic (the critic prompt selects the role) and updates the critic role
with RDPO: DPO on the feedback of a successful and a failed rollout of the same prompt whose pre-request
prefixes are alike (`papergym.credit.feedback.rdpo_pairs`), both scored under the successful rollout's
critic input. The hopper's version:

- `HintCritic` (a `Critic`): reads the question and the messages the env gives it exactly as the agent reads
  its observations (`papergym.baselines.search_hopper.Reading`) and walks each question name's chain with
  the ``hint`` rows of the policy's `SoftmaxHeads` (row: the blanked-question bucket × hop depth, choice:
  which relation to follow, as the agent's ``read`` head), then names the first passage still missing
  (``Missing hop: search for "X".``) or tells the agent to answer. The hint rows are the critic's own: a
  table shares nothing between rows, so "one model" here means one parameter set, not transfer between roles.
  It never sees the gold chain (the env's `OracleCritic` does).
- `hint_options`: every hint the critic can give for one input with the decision paths that give it, so a
  feedback text's probability under an input is exact (the sum over its paths): RDPO scores the rejected
  feedback f⁻ under the chosen rollout's input, as CAFE does with text.
- `critic_pairs` and `CriticRDPO`: the pairs of the latest rollouts as decision paths, and the update
  (`SoftmaxHeads.prefer`: DPO against the rows at the update's start) run every ``every`` GRPO steps: CAFE's
  alternation of online steps and one RDPO update (CAFE: 100 online steps × 1 RDPO, 5 rounds).
- `Args` / `train`: the hopper's GRPO with this critic and, when ``rdpo_every`` > 0, its RDPO rounds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from papergym.backends.protocols import Message
from papergym.baselines import search_hopper as hop
from papergym.baselines.losses import DPO_BETA
from papergym.baselines.softmax_grpo import Decision, Paths, SoftmaxHeads, make_env
from papergym.core.trajectory import Trajectory
from papergym.credit.feedback import JACCARD_THRESHOLD, rdpo_pairs
from papergym.envs.search.critic import OracleCritic

HINT_HEAD = "hint"
"""The critic role's own rows in `papergym.baselines.search_hopper.HEADS`."""
CRITIC_HEADS = {"own": HINT_HEAD, "shared": "read"}
"""``Args.critic_rows`` -> the head the critic draws from: its own rows, or the agent's ``read`` rows (the
same shape: the critic then follows relations with the very parameters the agent reads with)."""
_QUOTED = re.compile(r'[Ss]earch for "([^"]+)"')
ANSWER_NOW = "You have every passage the question needs: compare or read them and answer now."
"""The hint when the critic's walk finds every chain ended."""


def reading_of(question: str, trajectory: Sequence[Mapping[str, Any]]) -> hop.Reading:
    """What the critic reads: the question, then every message that is not the agent's own action."""
    reading = hop.Reading()
    reading.observe(f"Question: {question}")
    for message in trajectory:
        if message.get("role") != "assistant":
            reading.observe(str(message.get("content", "")))
    return reading


def hint_text(chains: Sequence[tuple[str | None, str | None]]) -> str:
    """The feedback for a walk's chains: the first open chain's next query, else `ANSWER_NOW`.

    >>> hint_text([(None, "t"), ("Li Wu chemist", "t")])
    'Missing hop: search for "Li Wu chemist".'
    """
    for query, _ in chains:
        if query is not None:
            return f'Missing hop: search for "{query}".'
    return ANSWER_NOW


class _Unassigned(Exception):
    """A walk reached a (chain, depth) the enumeration has not assigned a relation yet."""

    def __init__(self, key: tuple[int, int]) -> None:
        super().__init__(key)
        self.key = key


def hint_options(reading: hop.Reading, head: str = HINT_HEAD) -> dict[str, list[list[Decision]]]:
    """Every hint the critic can give on ``reading``, with the decision paths (rows of ``head`` and choices)
    that give it; the paths of all hints are the walk's every relation assignment, so their probabilities
    sum to one."""
    options: dict[str, list[list[Decision]]] = {}

    def explore(assigned: dict[tuple[int, int], int]) -> None:
        def choose(chain: int, depth: int) -> int:
            if (chain, depth) not in assigned:
                raise _Unassigned((chain, depth))
            return assigned[chain, depth]

        try:
            chains = hop.walk(reading, choose)
        except _Unassigned as missing:
            for choice in range(len(hop.READS)):
                explore({**assigned, missing.key: choice})
            return
        path = [(head, reading.bucket * hop.MAX_DEPTH + d, c) for (_, d), c in assigned.items()]
        options.setdefault(hint_text(chains), []).append(path)

    explore({})
    return options


class HintCritic:
    """A `Critic` drawing its hints from the rows of ``head`` in ``heads`` (module docstring); the env's
    ``seed`` seeds each call's draws."""

    def __init__(self, heads: SoftmaxHeads, head: str = HINT_HEAD) -> None:
        self.heads, self.head = heads, head

    def __repr__(self) -> str:
        return "HintCritic()"

    def feedback(
        self, question: str, trajectory: Sequence[Mapping[str, Any]], *, seed: int | None = None
    ) -> str:
        """`Critic.feedback`: one sampled hint for the episode so far."""
        reading, rng = reading_of(question, trajectory), np.random.default_rng(seed)
        return hint_text(hop.sampled_walk(self.heads, self.head, reading, {}, rng, []))


@dataclass(frozen=True)
class PairCount:
    """What became of a batch's RDPO pairs: ``found`` by `rdpo_pairs`, ``same`` feedback on both sides
    (no preference), ``unsayable`` (the rejected hint cannot be given on the chosen input), ``used``."""

    found: int
    same: int
    unsayable: int
    used: int


def critic_pairs(
    groups: Sequence[Sequence[Trajectory]], *, head: str = HINT_HEAD, threshold: float = JACCARD_THRESHOLD
) -> tuple[list[tuple[Paths, Paths]], PairCount]:
    """The RDPO pairs of ``groups`` as ``(chosen paths, rejected paths)`` (rows of ``head``) under the chosen
    rollout's critic input, and what was dropped."""
    pairs = [p for group in groups for p in rdpo_pairs(group, threshold=threshold)]
    out: list[tuple[Paths, Paths]] = []
    same = unsayable = 0
    for pair in pairs:
        if pair.chosen == pair.rejected:
            same += 1
            continue
        options = hint_options(reading_of(pair.question, pair.trajectory), head)
        if pair.chosen not in options or pair.rejected not in options:
            unsayable += 1
            continue
        out.append((options[pair.chosen], options[pair.rejected]))
    return out, PairCount(len(pairs), same, unsayable, len(out))


@dataclass
class CriticRDPO:
    """An ``after_step`` of `papergym.baselines.search_hopper.train`: every ``every`` steps, one RDPO update
    of the critic rows on the pairs of those steps' rollouts (``steps`` DPO steps, Adam ``lr``, DPO
    ``beta``) on the rows of ``head``. Each update's pair counts and last loss are kept in ``log``."""

    every: int
    steps: int
    lr: float
    beta: float = DPO_BETA
    head: str = HINT_HEAD
    log: list[dict[str, float]] = field(default_factory=list)
    _window: list[list[Trajectory]] = field(default_factory=list, repr=False)

    def __call__(
        self, step: int, groups: list[list[Trajectory]], policy: hop.HopperPolicy
    ) -> dict[str, float]:
        self._window.extend(groups)
        if (step + 1) % self.every:
            return {}
        pairs, count = critic_pairs(self._window, head=self.head)
        self._window.clear()
        loss = policy.heads.prefer(pairs, steps=self.steps, lr=self.lr, beta=self.beta)
        entry = {"step": float(step), **{k: float(v) for k, v in vars(count).items()}, "rdpo_loss": loss}
        self.log.append(entry)
        return {"rdpo_pairs": float(count.used), "rdpo_loss": loss}


class _RecordingOracle(OracleCritic):
    """The env's oracle critic, keeping every ``(question, messages, hint)`` it was asked and gave."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, list[dict[str, Any]], str]] = []

    def feedback(self, question: str, trajectory: Sequence[Message], *, seed: int | None = None) -> str:
        reply = super().feedback(question, trajectory, seed=seed)
        self.seen.append((question, [dict(m) for m in trajectory], reply))
        return reply


DEMO_BUDGET = 3
"""Requests the oracle answers per demonstration episode (more inputs per episode than the agent's 1)."""


def oracle_hints(
    env_id: str,
    env_kw: Sequence[str],
    *,
    episodes: int,
    seed: int,
    split: str = "train",
    head: str = HINT_HEAD,
) -> list[list[list[Decision]]]:
    """The critic's demonstrations (CAFE's Stage I critic data comes from a stronger model; here the env's
    oracle critic, which reads the gold chain): the oracle's hints to the untrained hopper on ``episodes``
    episodes of ``split``, each as the hint paths (rows of ``head``) that say it on the same input. Hints no
    path says (the oracle's wording for namesakes and options) and inputs that leave the critic no choice
    are dropped."""
    oracle = _RecordingOracle()
    env = make_env(env_id, [*env_kw, f"feedback_budget={DEMO_BUDGET}"], objects={"critic": oracle})
    agent = hop.HopperPolicy()
    rng = np.random.default_rng(seed)
    try:
        for _ in range(episodes):
            hop.play(env, agent, rng, seed=int(rng.integers(2**31 - 1)), options={"split": split})
    finally:
        env.close()
    targets = []
    for question, trajectory, hint in oracle.seen:
        options = hint_options(reading_of(question, trajectory), head)
        said = in_menu(hint)
        if len(options) > 1 and said in options:
            targets.append(options[said])
    return targets


def agreement(heads: SoftmaxHeads, demos: Sequence[Paths]) -> list[float]:
    """The critic's probability of saying what the oracle says, per input of ``demos`` (`oracle_hints`)."""
    return [float(p) for p in heads.path_logprobs(demos).detach().exp()]


def in_menu(oracle_hint: str) -> str | None:
    """The critic's hint that says what an oracle hint says: its quoted query, or `ANSWER_NOW` when every
    passage is in; None for the rest (generic advice, "the exact name of the first option").

    >>> in_menu('Missing hop: you still need the passage about X. Search for "Li Wu chemist".')
    'Missing hop: search for "Li Wu chemist".'
    """
    if oracle_hint.startswith("You have already retrieved every passage"):
        return ANSWER_NOW
    quoted = _QUOTED.search(oracle_hint)
    return hint_text([(quoted[1], None)]) if quoted and not quoted[1].startswith("the exact name") else None


@dataclass
class Args(hop.Args):
    """The hopper's GRPO with the learned critic (`HintCritic` on the policy's own rows) and RDPO rounds."""

    rdpo_every: int = 0
    """GRPO steps per RDPO update of the critic rows (0: the critic is never updated). CAFE: 100 online
    steps per RDPO update; inferred here as a fifth of the run (CAFE's 5 rounds)."""
    rdpo_steps: int = 20
    """DPO steps per update (inferred; CAFE: 2 epochs at lr 2e-7 on a 7B model)."""
    rdpo_lr: float = 0.1
    """Adam step size of the DPO steps (inferred, the hopper's GRPO step size)."""
    rdpo_beta: float = DPO_BETA
    """DPO's β (the DPO paper's 0.1; CAFE does not state its own)."""
    critic_demos: int = 40
    """Oracle-critic episodes the critic rows are first cloned from (`oracle_hints`; CAFE's Stage I SFT of
    the critic role). 0: the critic starts uniform. Inferred: enough for a critic that is right on some
    question forms, not all."""
    critic_demo_steps: int = 100
    """Behaviour-cloning steps of that warm start."""
    critic_demo_seed: int = 7
    """Seeds the demonstration episodes (the same warm critic for every arm and seed)."""
    critic_rows: str = "own"
    """``own``: the critic draws from its own ``hint`` rows; ``shared``: from the agent's ``read`` rows, so
    the SFT, the agent's GRPO and the critic's RDPO all move the same parameters (CAFE's one model)."""

    @property
    def critic_head(self) -> str:
        """The head the critic draws from (`CRITIC_HEADS`)."""
        if self.critic_rows not in CRITIC_HEADS:
            raise ValueError(f"critic_rows must be one of {sorted(CRITIC_HEADS)}, got {self.critic_rows!r}")
        return CRITIC_HEADS[self.critic_rows]


def warm_critic(args: Args) -> hop.HopperPolicy:
    """A new policy whose critic rows are cloned from `oracle_hints`: the "SFT critic" every arm starts
    from (with ``critic_rows="shared"`` those are the agent's ``read`` rows, which the SFT then moves too;
    every other agent row stays uniform)."""
    policy = hop.HopperPolicy(lr=args.lr, epochs=args.epochs)
    if args.critic_demos > 0:
        demos = oracle_hints(
            args.env,
            args.env_kw,
            episodes=args.critic_demos,
            seed=args.critic_demo_seed,
            head=args.critic_head,
        )
        policy.heads.imitate_outputs(demos, steps=args.critic_demo_steps, lr=args.lr)
    return policy


def train(
    args: Args, *, on_step: hop.StepCallback | None = None, policy: hop.HopperPolicy | None = None
) -> tuple[hop.HopperPolicy, list[dict[str, float]]]:
    """`search_hopper.train` of ``policy`` (else `warm_critic`'s) with `HintCritic` as the env's critic and,
    when ``rdpo_every`` > 0, a `CriticRDPO` update every ``rdpo_every`` steps; the policy and the RDPO
    log."""
    if args.rdpo_every < 0 or args.rdpo_steps < 0:
        raise ValueError(f"rdpo_every and rdpo_steps must be >= 0, got {args.rdpo_every}, {args.rdpo_steps}")
    rdpo = (
        CriticRDPO(args.rdpo_every, args.rdpo_steps, args.rdpo_lr, args.rdpo_beta, args.critic_head)
        if args.rdpo_every
        else None
    )
    policy = hop.train(
        args,
        on_step=on_step,
        critic_of=lambda p: HintCritic(p.heads, args.critic_head),
        after_step=rdpo,
        policy=warm_critic(args) if policy is None else policy,
    )
    return policy, [] if rdpo is None else rdpo.log
