"""A small learned multi-hop search policy for `papergym/SearchCritic-v0`, trained with the GRPO loss.

The policy is not a language model: it is for CAFE's question (envs.md §3) of whether rewarding feedback
requests changes what an agent learns, where the ~1M-parameter LM cannot copy names off a passage on a CPU
budget (benchmarks/README.md, "Tiny-LM copying") and so never completes a search chain. Here copying is
given by the action space (a query or an answer is a name read off a passage or the question) and *what
to do* is learned, from softmax rows chosen by what the policy has read (`HEADS`):

- ``read`` (row: the question with its names blanked, hashed into `QUESTION_BUCKETS`, × hop depth): after
  a chain's entity passage is found, which relation names the next entity to search: ``stop`` (the chain
  ends here), ``creator`` (``directed by`` / ``written by``) or ``father`` (``Their father was``). Each
  question name starts a chain; the relation is read with the env's own passage parser
  (`papergym.envs.search.knowledge_base.read_attribute`, which also gives the next entity's occupation, the
  query's qualifier).
- ``act`` (row: every chain ended? × feedback received?): search the next entity of the first open chain,
  request feedback, or answer.
- ``query`` (row: every chain ended?), when the critic's feedback quotes a query not yet searched
  (``search for "..."``): search the policy's own next query or the critic's.
- ``answer`` (row: the blanked-question bucket): the answer rule: the ``birthplace`` or ``father`` read off
  the last search's top passage, or the ``earlier`` / ``later`` of the question's two options by the
  birth year or the year read off each chain's last passage. When the drawn rule finds nothing in what was
  read, the turn searches instead (an episode that never answers is cut by the env's time limit: an
  abstention, not a hallucination).

The plan a question needs (which relation at each hop, which answer rule) is what the policy must learn;
the env's critic, asked, names the next passage to fetch ("Missing hop: ... search for "X"") and so carries
that plan, which is where requesting feedback can pay. Nothing reads the gold answer, the evidence chain
or the env's checks; the policy sees only observation texts. Initial logits are zero (uniform choices).

`play` runs one episode and returns its `Trajectory` and the decisions with the step each was made at;
`train` runs GRPO over groups of episodes of one task, with an optional `GroupReward` (CAFE's CFE reward)
and `AdvantageHook` (CAFE's shaping) applied to the episodes exactly as `papergym.baselines.grpo` does.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from papergym.baselines import grpo
from papergym.baselines.run import parse_kwargs
from papergym.baselines.softmax_grpo import (
    Sample,
    SoftmaxGRPOArgs,
    SoftmaxHeads,
    decision_advantages,
    make_env,
    sample_groups,
)
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.trajectory import Step, Trajectory
from papergym.credit import ADVANTAGE_HOOKS, GROUP_REWARDS, resolve
from papergym.credit.feedback import call_skip_gap, requested
from papergym.envs.search.formats import search_action
from papergym.envs.search.knowledge_base import read_attribute

ACTS: tuple[str, ...] = ("search", "request", "answer")
READS: tuple[str, ...] = ("stop", "creator", "father")
QUERY_SOURCES: tuple[str, ...] = ("own", "critic")
ANSWER_RULES: tuple[str, ...] = (
    "birthplace",
    "father",
    "earlier_birth_year",
    "later_birth_year",
    "earlier_year",
    "later_year",
)
QUESTION_BUCKETS = 64
"""Rows the blanked question is hashed into (inferred: SearchCritic-v0 has about 20 question forms)."""
MAX_DEPTH = 2
"""Relations read along one chain at most (the env's longest chain is three passages)."""
HEADS: dict[str, tuple[int, int]] = {
    "read": (QUESTION_BUCKETS * MAX_DEPTH, len(READS)),
    "act": (4, len(ACTS)),
    "query": (2, len(QUERY_SOURCES)),
    "answer": (QUESTION_BUCKETS, len(ANSWER_RULES)),
    "hint": (QUESTION_BUCKETS * MAX_DEPTH, len(READS)),
}
"""The policy's softmax tables, ``name -> (rows, choices)``. ``hint`` holds the critic role's rows
(`papergym.baselines.hint_critic`: the policy's own parameters play the critic, as CAFE's one model plays
both roles); the agent never draws from it."""
TRAIN_OPTIONS = {"split": "train"}
"""The reset options of a training episode."""
_QUESTION = re.compile(r"^Question: (.+)$", re.MULTILINE)
_DOC = re.compile(r"^(?:<information>)?Doc \d+\(Title: (.+?)\) (.*?)(?:</information>)?$", re.MULTILINE)
_FEEDBACK = re.compile(r"<feedback>(.*?)</feedback>", re.DOTALL)
_QUOTED = re.compile(r'search for "([^"]+)"')
_NAME = re.compile(r"\b(?:The )?[A-Z][a-z]+(?: [A-Z][a-z]+)+")


def question_names(question: str) -> list[str]:
    """The names a question mentions (runs of two or more capitalised words, an optional "The" first).

    >>> question_names("Who was born first, Ana Bo Tek or The Ko Gate?")
    ['Ana Bo Tek', 'The Ko Gate']
    """
    return list(dict.fromkeys(_NAME.findall(question)))


def question_bucket(question: str, names: Sequence[str]) -> int:
    """The row of a question form: the question with its names blanked, hashed (crc32) into buckets.

    >>> a = question_bucket("Where was Ana Bo born?", ["Ana Bo"])
    >>> a == question_bucket("Where was Li Wu born?", ["Li Wu"])
    True
    """
    form = question
    for name in names:
        form = form.replace(name, "_")
    return zlib.crc32(form.encode()) % QUESTION_BUCKETS


@dataclass
class Reading:
    """What the policy has read in one episode, from observation texts only."""

    question: str = ""
    names: list[str] = field(default_factory=list)
    bucket: int = 0
    passages: dict[str, str] = field(default_factory=dict)
    """Title -> text of every passage shown (insertion order: first shown first)."""
    order: list[str] = field(default_factory=list)
    """Titles in the order they were last shown."""
    top: str | None = None
    """The text of the last search's first passage."""
    queries: list[str] = field(default_factory=list)
    feedback: str | None = None

    def observe(self, observation: str) -> None:
        """Take in one observation: the task's first text, search results or feedback."""
        match = _QUESTION.search(observation)
        if match and not self.question:
            self.question = match[1].strip()
            self.names = question_names(self.question)
            self.bucket = question_bucket(self.question, self.names)
            return
        docs = _DOC.findall(observation)
        for i, (title, text) in enumerate(docs):
            self.passages[title] = text
            if title in self.order:
                self.order.remove(title)
            self.order.append(title)
            if i == 0:
                self.top = text
        feedback = _FEEDBACK.search(observation)
        if feedback:
            self.feedback = feedback[1].strip()

    def passage_of(self, name: str) -> str | None:
        """The text of the passage about ``name`` (its title, or ``name (occupation)`` for one of
        namesakes: the latest shown), or None if none was shown."""
        for title in reversed(self.order):
            if title == name or title.startswith(f"{name} ("):
                return self.passages[title]
        return None

    def critic_query(self) -> str | None:
        """The query the critic's feedback quotes, when it is not searched yet."""
        quoted = _QUOTED.search(self.feedback or "")
        return quoted[1] if quoted and quoted[1] not in self.queries else None


class HopperPolicy:
    """The learned search policy (module docstring); ``lr`` and ``epochs`` are `SoftmaxHeads`'."""

    def __init__(self, *, lr: float = 0.1, epochs: int = 4) -> None:
        self.heads = SoftmaxHeads(HEADS, lr=lr, epochs=epochs)

    def chains(
        self, reading: Reading, reads: dict[tuple[int, int], int], rng: np.random.Generator, decisions: list
    ) -> list[tuple[str | None, str | None]]:
        """`sampled_walk` with the ``read`` head."""
        return sampled_walk(self.heads, "read", reading, reads, rng, decisions)

    def act(
        self, reading: Reading, reads: dict[tuple[int, int], int], rng: np.random.Generator, decisions: list
    ) -> str:
        """The next action text (CAFE's format), drawing this turn's decisions into ``decisions``."""
        chains = self.chains(reading, reads, rng, decisions)
        open_queries = [q for q, _ in chains if q is not None]
        ended = not open_queries
        act = ACTS[self.heads.draw("act", 2 * ended + (reading.feedback is not None), rng, decisions)]
        if act == "request":
            return "<request_feedback></request_feedback>"
        if act == "answer":
            rule = ANSWER_RULES[self.heads.draw("answer", reading.bucket, rng, decisions)]
            found = answer(rule, reading, [text for _, text in chains])
            if found is not None:
                return f"<answer>{found}</answer>"
            # the rule finds nothing in what was read: no answer yet, the turn searches instead
        query = open_queries[0] if open_queries else None
        critic = reading.critic_query()
        if (
            critic is not None
            and QUERY_SOURCES[self.heads.draw("query", int(ended), rng, decisions)] == "critic"
        ):
            query = critic
        if query is None:  # nothing left to fetch: the search repeats the last one (a wasted turn)
            query = reading.queries[-1] if reading.queries else (reading.names or [reading.question])[0]
        reading.queries.append(query)
        return search_action([query])


def walk(reading: Reading, choose: Callable[[int, int], int]) -> list[tuple[str | None, str | None]]:
    """Per question name (two at most), ``(next query, last passage text)``: the chain starts at the name
    and, at each passage found, follows the relation ``READS[choose(chain, depth)]`` (`read_attribute`
    gives the next entity and its occupation, the query's qualifier); the query is None once the chain
    ended (``stop``, no such relation in the passage, or `MAX_DEPTH` relations read).

    >>> r = Reading(names=["Ana Bo"], passages={"Ana Bo": "Their father was Li Wu, a chemist."})
    >>> r.order = ["Ana Bo"]
    >>> walk(r, lambda chain, depth: READS.index("father"))[0][0]
    'Li Wu chemist'
    """
    out: list[tuple[str | None, str | None]] = []
    for i, name in enumerate(reading.names[:2]):
        entity, qualifier, text = name, "", None
        for depth in range(MAX_DEPTH + 1):
            found = reading.passage_of(entity)
            if found is None:
                out.append((f"{entity} {qualifier}".strip(), text))
                break
            text = found
            if depth == MAX_DEPTH:
                out.append((None, text))
                break
            relation = READS[choose(i, depth)]
            value = read_attribute(text, relation) if relation != "stop" else None
            if value is None:
                out.append((None, text))
                break
            entity, qualifier = value
    return out


def sampled_walk(
    heads: SoftmaxHeads,
    head: str,
    reading: Reading,
    reads: dict[tuple[int, int], int],
    rng: np.random.Generator,
    decisions: list,
) -> list[tuple[str | None, str | None]]:
    """`walk` with relations drawn from ``head`` (row: the question bucket × depth): a decision is drawn the
    first time a chain reaches a passage and kept in ``reads`` (the agent's reading and the critic's hints
    both walk this way)."""

    def choose(chain: int, depth: int) -> int:
        if (chain, depth) not in reads:
            reads[chain, depth] = heads.draw(head, reading.bucket * MAX_DEPTH + depth, rng, decisions)
        return reads[chain, depth]

    return walk(reading, choose)


def answer(rule: str, reading: Reading, last_passages: Sequence[str | None]) -> str | None:
    """The answer ``rule`` gives from what was read (None if it finds nothing).

    >>> r = Reading(names=["Ana Bo", "Li Wu"], top="Ana Bo (born 1901 in Tek) is a chemist from Vel.")
    >>> answer("birthplace", r, [])
    'Tek'
    >>> answer("later_birth_year", r, ["(born 1901 in Tek)", "(born 1899 in Ul)"])
    'Ana Bo'
    """
    if rule in ("birthplace", "father"):
        read = read_attribute(reading.top or "", rule)
        return read[0] if read else None
    order, attribute = rule.split("_", 1)
    if len(reading.names) < 2 or len(last_passages) < 2:
        return None
    values = [read_attribute(text or "", attribute) for text in last_passages[:2]]
    if values[0] is None or values[1] is None:
        return None
    first, second = int(values[0][0]), int(values[1][0])
    if first == second:
        return None
    first_wins = first < second if order == "earlier" else first > second
    return reading.names[0] if first_wins else reading.names[1]


def play(
    env: Any, policy: HopperPolicy, rng: np.random.Generator, *, seed: int, options: dict[str, Any]
) -> tuple[Trajectory, Sample, list[int]]:
    """One episode: its trajectory, the decisions drawn (`Sample`) and the step index of each decision."""
    observation, info = env.reset(seed=seed, options=options)
    reading = Reading()
    reading.observe(observation)
    traj = Trajectory(str(info.get(K.TASK_ID, seed)), seed, reset_info=info)
    sample = Sample("")
    steps_of: list[int] = []
    reads: dict[tuple[int, int], int] = {}
    while True:
        before = len(sample.decisions)
        action = policy.act(reading, reads, rng, sample.decisions)
        steps_of += [len(traj.steps)] * (len(sample.decisions) - before)
        new, reward, terminated, truncated, info = env.step(action)
        traj.steps.append(Step(observation, action, float(reward), info))
        observation = new
        reading.observe(observation)
        if terminated or truncated:
            traj.success, traj.terminated, traj.truncated = bool(info.get("success")), terminated, truncated
            return traj, sample, steps_of


@dataclass
class Args(SoftmaxGRPOArgs):
    """GRPO on the hopper: ``steps`` × ``tasks_per_step`` tasks × ``group_size`` episodes."""

    env: str = "papergym/SearchCritic-v0"
    """The env id the policy trains on."""
    env_kw: list[str] = field(default_factory=lambda: ["n_passages=2000", "max_episode_steps=10"])
    """The env's kwargs (a 2,000-passage world, ten actions at most: CAFE's driver's setting)."""
    group_reward: str | None = None
    """A `GroupReward` name of `papergym.credit.GROUP_REWARDS` (CAFE: ``feedback_request``), else the
    episode's return."""
    group_reward_kw: list[str] = field(default_factory=list)
    """The group reward's constructor kwargs as ``key=value`` (e.g. ``gamma=0`` for ``feedback_request``)."""
    advantage_hook: str | None = None
    """An `AdvantageHook` name of `papergym.credit.ADVANTAGE_HOOKS` (CAFE: ``feedback_shaping``)."""
    update_agent: bool = True
    """Take the GRPO step on the agent's decisions (False: the agent stays as it starts; CAFE's
    critic-only ablation, with ``after_step`` training the critic)."""


StepCallback = Callable[[int, dict[str, float], HopperPolicy], None]
GroupsCallback = Callable[[int, list[list[Trajectory]], HopperPolicy], dict[str, float]]
"""``after_step(step, groups, policy)``: called after each step's update with its episodes; its metrics
join the step's (CAFE's alternation runs the critic's RDPO update here)."""


def train(
    args: Args,
    *,
    on_step: StepCallback | None = None,
    critic_of: Callable[[HopperPolicy], Any] | None = None,
    after_step: GroupsCallback | None = None,
    policy: HopperPolicy | None = None,
) -> HopperPolicy:
    """GRPO on ``args.env``: every step, ``tasks_per_step`` train-split tasks, ``group_size`` episodes each;
    rewards from ``group_reward`` (or each episode's return), advantages group-normalised and passed through
    ``advantage_hook``. ``critic_of(policy)``, when given, is the env's critic (else the env's own);
    ``after_step`` runs after each update; ``policy`` (else a new one) is trained in place.
    ``on_step(step, metrics, policy)`` gets the step's mean env
    return, success, request rate, the call-skip gap, the loss and ``after_step``'s metrics."""
    require("torch", "llm")  # a clear error before any episode is played
    if args.group_reward_kw and args.group_reward is None:
        raise ValueError("group_reward_kw configures group_reward: name the group reward")
    reward_fn = resolve(args.group_reward, GROUP_REWARDS, **parse_kwargs(args.group_reward_kw))
    hook = resolve(args.advantage_hook, ADVANTAGE_HOOKS)
    policy = policy if policy is not None else HopperPolicy(lr=args.lr, epochs=args.epochs)
    objects = None if critic_of is None else {"critic": critic_of(policy)}
    env = make_env(args.env, args.env_kw, objects=objects)
    rng = np.random.default_rng(args.seed)
    try:
        for step in range(args.steps):
            groups, samples, steps_of = sample_groups(env, policy, play, rng, args, TRAIN_OPTIONS)
            rewards = grpo.group_rewards(groups, reward_fn)
            loss = (
                policy.heads.update(samples, decision_advantages(groups, rewards, steps_of, hook))
                if args.update_agent
                else 0.0
            )
            extra = {} if after_step is None else after_step(step, groups, policy)
            if on_step is not None:
                trajs = [t for g in groups for t in g]
                metrics = {
                    "reward": float(np.mean([t.total_reward for t in trajs])),
                    "success": float(np.mean([t.success for t in trajs])),
                    "request_rate": float(np.mean([requested(t) for t in trajs])),
                    "call_skip_gap": call_skip_gap(trajs),
                    "loss": loss,
                    **extra,
                }
                on_step(step, metrics, policy)
    finally:
        env.close()
    return policy
