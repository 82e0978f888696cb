"""`papergym/SelfPlay-v0`: challenger, solver and judge co-evolving (J-Zero), as a PettingZoo environment.

``raw_env`` is the AEC environment, ``env()`` the same wrapped in PettingZoo's order-enforcing
wrapper, ``parallel_env`` the parallel API over the same round (every live agent submits an action
each step; only the active role's is consumed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
from gymnasium.utils import seeding
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils import wrappers

from papergym.backends.protocols import ChatModel
from papergym.backends.resolve import resolve_backend
from papergym.core.spaces import FreeText
from papergym.envs.selfplay.game import OPEN_ENDED, ROLES, Agreement, JudgeLabels, SelfPlayGame
from papergym.envs.selfplay.judges import BTJudge, ModelPreferenceJudge, PairwiseJudge
from papergym.envs.selfplay.pairs import AmplificationMode
from papergym.envs.selfplay.writing import DEFAULT_RUBRIC, QualityRubric

ENV_ID = "papergym/SelfPlay-v0"
_OBS_MAX = 1_000_000
_SAMPLES: dict[str, tuple[str, ...]] = {
    "challenger": (
        "<task>Write a short note about the place.\ninclude: tide\nmax_words: 60</task>\n"
        "<reference>The tide turns slowly at the harbor.</reference>",
        "<task>What is 2 + 3?</task><reference>5</reference>",
    ),
    "solver": ("The tide turns slowly at the harbor.", "\\boxed{5}"),
    "judge": ("<scores>1 0</scores>",),
}


class TextObservation(str):
    """A ``str`` observation that also states its dtype (``np.dtype(str)``, the `FreeText` space's).

    PettingZoo's ``api_test`` compares ``observation.dtype`` with the space's dtype, which a plain
    ``str`` lacks; in every other respect this is the ``str`` it wraps.
    """

    __slots__ = ()
    dtype = np.dtype(str)


def make_judge(judge: PairwiseJudge | ChatModel | str | None) -> PairwiseJudge:
    """The env's judge from its ``judge=`` argument (the backend rule of `papergym.backends`): None or
    ``"bt"`` (a fresh `BTJudge`), a `PairwiseJudge`, or a bare `ChatModel` (wrapped in
    `ModelPreferenceJudge`)."""
    return resolve_backend(
        judge,
        role="judge",
        method="scores",
        default=BTJudge,
        names={"bt": BTJudge},
        wrap=ModelPreferenceJudge,  # type: ignore[arg-type]  # a bare ChatModel (checked by resolve_backend)
    )


class _SelfPlayBase:
    """Construction, spaces and helpers shared by the AEC and the parallel env."""

    metadata: ClassVar[dict[str, Any]] = {"name": "papergym_selfplay_v0", "render_modes": ["ansi"]}

    def _setup(
        self,
        *,
        domains: Sequence[str],
        group_size: int,
        judge: PairwiseJudge | ChatModel | str | None,
        judge_labels: JudgeLabels,
        agreement: Agreement,
        pair_kinds: Sequence[str],
        amplification: AmplificationMode,
        max_pairs: int,
        trainable: Mapping[str, bool] | None,
        rubric: QualityRubric,
        format_penalty: float,
        max_chars: int,
        render_mode: str | None,
    ) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        unknown = set(trainable or {}) - set(ROLES)
        if unknown:
            raise ValueError(f"trainable names unknown roles {sorted(unknown)}; roles: {ROLES}")
        self.possible_agents: list[str] = list(ROLES)
        self.agents: list[str] = []
        self.render_mode = render_mode
        self.judge = make_judge(judge)
        self.trainable: dict[str, bool] = {role: bool((trainable or {}).get(role, True)) for role in ROLES}
        self.game = SelfPlayGame(
            domains=domains,
            group_size=group_size,
            judge_labels=judge_labels,
            agreement=agreement,
            pair_kinds=pair_kinds,
            amplification=amplification,
            max_pairs=max_pairs,
            rubric=rubric,
            format_penalty=format_penalty,
            max_chars=max_chars,
        )
        self._obs_spaces = {role: FreeText(_OBS_MAX) for role in ROLES}
        self._act_spaces = {role: FreeText(_OBS_MAX, samples=_SAMPLES[role]) for role in ROLES}
        self.np_random: np.random.Generator | None = None

    def observation_space(self, agent: str) -> FreeText:
        return self._obs_spaces[agent]

    def action_space(self, agent: str) -> FreeText:
        return self._act_spaces[agent]

    def _start_round(self, seed: int | None, options: Mapping[str, Any] | None) -> None:
        if seed is not None or self.np_random is None:
            self.np_random, _ = seeding.np_random(seed)
        options = dict(options or {})
        self.game.start(self.np_random, {k: v for k, v in options.items() if k == "domain"})
        self.agents = list(ROLES)

    def judge_action(self, *, seed: int | None = None) -> str:
        """The action the env's own judge (``judge=``) takes on the current candidates."""
        return self.game.judge_action(self.judge, seed=seed)

    def hidden_quality(self, answer: str) -> float:
        """The hidden quality of ``answer`` in the current open-ended round (evaluation only; no
        reward reads it)."""
        if self.game.round is None or self.game.round.domain != OPEN_ENDED:
            raise ValueError("hidden_quality needs an open-ended ('writing') round in progress")
        return self.game.quality(answer)

    def render(self) -> str | None:
        if self.render_mode is None or self.game.round is None:
            return None
        return "\n\n".join(self.game.observation(role) for role in ROLES)

    def close(self) -> None:
        self.agents = []


class raw_env(_SelfPlayBase, AECEnv):  # lower-case: PettingZoo's module convention
    """Challenger, solver and judge co-evolving in verifiable and open-ended domains (J-Zero).

    ## Description
    A round per episode. The ``challenger`` reads the domain's material (a source problem with its
    answer for a verifiable domain; a topic, a privileged source passage and a menu of soft
    constraints for the open-ended ``writing`` domain) and writes a task and a privileged reference
    answer. The ``solver`` answers the task ``group_size`` times without seeing the material. The
    ``judge`` scores every candidate: the answers, the reference and the texts of the round's
    structural preference pairs. Open-ended rounds carry a hidden quality function (`hidden_quality`)
    that no agent sees and no reward uses.

    ## Observation
    A ``str`` per agent: its role's prompt when it is its turn, a waiting line otherwise, and its
    reward once the round is over.

    ## Action
    A ``str``. Challenger: ``<task>...</task><reference>...</reference>``; an open-ended task states
    its constraints one per line as ``kind: arg`` (include, avoid, min_words, max_words, end_with,
    bullets). Solver: the answer (``\\boxed{}`` in verifiable domains). Judge:
    ``<scores>s1 s2 ...</scores>``, one number per candidate.

    ## Reward
    Given to every agent when the round ends. Challenger: R-Zero's uncertainty ``1 - 2|p̂ - 0.5|``
    (p̂: the share of answers equal to the reference, verifiable; open-ended, the share the judge scores
    above the reference, or with ``agreement="soft"`` the mean BT probability ``σ(s_i - s_ref)``), -1
    for an unparseable task (which ends the round); the batch's repetition penalty is
    `papergym.credit.rzero.RZeroReward`. Solver: the mean over its answers of exact match
    (verifiable) or the judge's Bradley–Terry win rate against the other answers (open-ended);
    per-answer rewards in ``info["solver_rewards"]``; an empty answer scores ``-format_penalty``.
    Judge: the share of structural pairs it orders correctly (``-format_penalty`` for unreadable
    scores).

    ## Episode End
    All agents terminate when the judge has scored (or at once after an unparseable task).

    ## Arguments
    - ``domains``: from ``writing``, ``math``, ``code``, ``science``; one is drawn per round
      (``reset(options={"domain": ...})`` picks it; other option keys are ignored, as PettingZoo's
      ``api_test`` passes arbitrary ones).
    - ``group_size``: G, the solver's answers per task (default 4).
    - ``judge``: None or ``"bt"`` (a `BTJudge`), any `PairwiseJudge`, or a `ChatModel`; the env's own judge,
      whose action `judge_action` returns (the judge agent may be any policy).
    - ``judge_labels``: ``"structural"`` (pairs labelled by construction) or ``"self_scored"``
      (relabelled by the judge's own scores: the self-reinforcing ablation).
    - ``agreement``: ``"hard"`` (§1.6's share of answers beating the reference) or ``"soft"`` (their
      mean BT win probability against it; inferred, continuous when the reference always wins).
    - ``pair_kinds``, ``amplification`` (``"drop"`` / ``"amplify"``), ``max_pairs``: the structural
      pair constructions, inferred (papers/training.md §1.6).
    - ``trainable``: per-role flags reported in ``info["trainable"]`` (a trainer may freeze roles).
    - ``rubric``: the hidden quality's weights (inferred). ``format_penalty`` (0.1, inferred),
      ``max_chars`` (actions are cut to this length), ``render_mode`` (None or ``"ansi"``).

    ## Paper
    J-Zero (not found; papers/training.md §1.1, §1.6 inferred), R-Zero (arXiv 2508.05004, §1.3).

    ## Version History
    - v0: initial version.

    >>> import papergym
    >>> env = papergym.make_multiagent("papergym/SelfPlay-v0", domains=("math",), group_size=2)
    >>> env.reset(seed=0)
    >>> env.agent_selection
    'challenger'
    >>> env.step("<task>What is 2 + 3?</task><reference>5</reference>")
    >>> env.step("\\\\boxed{5}"); env.step("\\\\boxed{6}")
    >>> env.step(env.unwrapped.judge_action())
    >>> env.rewards["challenger"], env.infos["solver"]["solver_rewards"]
    (1.0, [1.0, 0.0])
    """

    def __init__(
        self,
        *,
        domains: Sequence[str] = (OPEN_ENDED, "math"),
        group_size: int = 4,
        judge: PairwiseJudge | ChatModel | str | None = None,
        judge_labels: JudgeLabels = "structural",
        agreement: Agreement = "hard",
        pair_kinds: Sequence[str] = ("role_asymmetry", "subtask_amplification"),
        amplification: AmplificationMode = "drop",
        max_pairs: int = 32,
        trainable: Mapping[str, bool] | None = None,
        rubric: QualityRubric = DEFAULT_RUBRIC,
        format_penalty: float = 0.1,
        max_chars: int = 4000,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        self._setup(
            domains=domains,
            group_size=group_size,
            judge=judge,
            judge_labels=judge_labels,
            agreement=agreement,
            pair_kinds=pair_kinds,
            amplification=amplification,
            max_pairs=max_pairs,
            trainable=trainable,
            rubric=rubric,
            format_penalty=format_penalty,
            max_chars=max_chars,
            render_mode=render_mode,
        )

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self._start_round(seed, options)
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: self.game.info(a, self.trainable[a]) for a in self.agents}
        self.agent_selection = self.game.active

    def observe(self, agent: str) -> str:
        return TextObservation(self.game.observation(agent))

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        self.game.act(action)
        done = self.game.active == "done"
        round_rewards = self.game.round.rewards if self.game.round else {}
        self.rewards = {a: float(round_rewards[a]) if done else 0.0 for a in self.agents}
        if done:
            self.terminations = dict.fromkeys(self.agents, True)
        self.infos = {a: self.game.info(a, self.trainable[a]) for a in self.agents}
        self.agent_selection = self.agents[0] if done else self.game.active
        self._accumulate_rewards()


class parallel_env(_SelfPlayBase, ParallelEnv):  # lower-case: PettingZoo's module convention
    """The parallel API of `raw_env` (same arguments and rules).

    Each step every live agent submits an action; only the active role's (``info["phase"]``) is
    consumed and the others are ignored. A round takes ``group_size + 2`` steps.

    >>> env = parallel_env(domains=("math",), group_size=2)
    >>> obs, infos = env.reset(seed=0)
    >>> infos["solver"]["phase"]
    'challenger'
    """

    def __init__(self, **kwargs: Any) -> None:
        defaults = dict(raw_env.__init__.__kwdefaults__ or {})
        unknown = set(kwargs) - set(defaults)
        if unknown:
            raise ValueError(f"unknown argument(s) {sorted(unknown)}; accepted: {sorted(defaults)}")
        self._setup(**(defaults | kwargs))

    def reset(
        self, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        self._start_round(seed, options)
        return self._views()

    def _views(self) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
        obs = {a: TextObservation(self.game.observation(a)) for a in self.agents}
        return obs, {a: self.game.info(a, self.trainable[a]) for a in self.agents}

    def step(
        self, actions: Mapping[str, Any]
    ) -> tuple[dict[str, str], dict[str, float], dict[str, bool], dict[str, bool], dict[str, dict[str, Any]]]:
        active = self.game.active
        if active not in actions:
            raise ValueError(f"the {active!r} acts this step: actions must hold its action (info['phase'])")
        self.game.act(actions[active])
        done = self.game.active == "done"
        obs, infos = self._views()
        round_rewards = self.game.round.rewards if self.game.round else {}
        rewards = {a: float(round_rewards[a]) if done else 0.0 for a in self.agents}
        terminations = dict.fromkeys(self.agents, done)
        truncations = dict.fromkeys(self.agents, False)
        if done:
            self.agents = []
        return obs, rewards, terminations, truncations, infos


def env(**kwargs: Any) -> AECEnv:
    """`raw_env` in PettingZoo's order-enforcing wrapper (the usual ``env()``)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))
