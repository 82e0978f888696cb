"""GRPO on a learned (non-LM) service agent that acts from a menu: what every domain's menu shares.

A menu policy (`MenuAgent`: `papergym.baselines.retail_menu.MenuPolicy`,
`papergym.baselines.telecom_menu.TelecomMenu`) reads the whole conversation each turn (a chat observation)
and draws its turn from softmax heads (`papergym.baselines.softmax_grpo.SoftmaxHeads`): which question,
read call, instruction, write or closing, with every call well formed by construction. This module holds
what does not depend on the domain's tools:

- `play`: one episode, its decisions and the step each was drawn at;
- `demonstrations`: the domain's demonstrator (the env's oracle, or a listener's oracle on a speech
  channel) turned into menu decisions (the menu's own labels), for a behaviour-cloning warm start;
- `Args`, `warm_policy`, `train`: the warm start, then GRPO over groups of episodes of one task (in an env
  wrapper such as SpeechGym's ``process_reward``, or with an advantage hook such as IAPO's ``influence``).

`MENUS` names the menus (``retail``, ``telecom``); `Args.menu` picks one.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from papergym.baselines import grpo
from papergym.baselines.losses import group_advantages
from papergym.baselines.run import parse_kwargs
from papergym.baselines.softmax_grpo import (
    Decision,
    Sample,
    SoftmaxGRPOArgs,
    SoftmaxHeads,
    decision_advantages,
    make_env,
    sample_groups,
)
from papergym.core import info_keys as K
from papergym.core.errors import require
from papergym.core.tool_calls import ToolCall, parse_tool_calls
from papergym.core.trajectory import Step, Trajectory
from papergym.credit import ADVANTAGE_HOOKS, resolve

TRAIN_OPTIONS = {"split": "train"}
"""The reset options of a training episode."""
Demonstrator = Callable[[Any, Mapping[str, Any]], str]
"""``(observation, info) -> action``: a demonstrator bound to one env and task."""


class MenuAgent(Protocol):
    """What `play`, `demonstrations` and `train` need of a domain's menu policy."""

    heads: SoftmaxHeads

    def __init__(self, *, lr: float = ..., epochs: int = ..., optimizer: str = ...) -> None: ...

    def read(self, messages: Sequence[Mapping[str, Any]]) -> Any:
        """What the policy knows from the conversation so far."""

    def act(self, reading: Any, rng: np.random.Generator, decisions: list[Decision]) -> str:
        """Draw one turn's choices (appended to ``decisions``) and return the action they say."""

    @staticmethod
    def demonstrator(env: Any, task_seed: int) -> Demonstrator:
        """The demonstrator of one training task (called before the env's reset)."""

    @staticmethod
    def episode_decisions(turns: Sequence[tuple[Any, str]]) -> list[Decision]:
        """A demonstration's ``(reading, action)`` turns as the menu's decisions (turns the menu cannot
        say are left out)."""


MENUS: dict[str, str] = {
    "retail": "papergym.baselines.retail_menu:MenuPolicy",
    "telecom": "papergym.baselines.telecom_menu:TelecomMenu",
}
"""The menus by domain: ``module:Class`` (imported on use)."""


def menu_class(name: str) -> type[MenuAgent]:
    """The menu policy class of ``name`` (a `MENUS` key).

    >>> menu_class("telecom").__name__
    'TelecomMenu'
    """
    if name not in MENUS:
        raise ValueError(f"no menu {name!r}; the menus: {sorted(MENUS)}")
    module, cls = MENUS[name].split(":")
    found: type[MenuAgent] = getattr(importlib.import_module(module), cls)
    return found


def tool_result(text: str) -> Any:
    """A tool message's result: its JSON value, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def call_text(name: str, **arguments: Any) -> str:
    """The action calling tool ``name`` with ``arguments``."""
    return ToolCall(name, arguments).format()


def same_call(a: str, b: str) -> bool:
    """Whether two actions are each one call, the same tool with the same arguments."""
    calls_a, calls_b = parse_tool_calls(a).calls, parse_tool_calls(b).calls
    return len(calls_a) == len(calls_b) == 1 and calls_a[0].to_dict() == calls_b[0].to_dict()


def conversation(messages: Sequence[Mapping[str, Any]]) -> Iterator[tuple[str, str, str]]:
    """The user, agent and tool messages as ``(role, text, tool)``: for an agent message the tool it calls
    ('' for a message to the user), for a tool message the tool whose result it is (a result no call asked
    for is left out), '' for a user message."""
    pending: str | None = None  # the tool the last agent turn called, until its result
    for message in messages:
        role, text = message.get("role"), str(message.get("content", ""))
        if role == "user":
            yield role, text, ""
        elif role == "assistant":
            calls = parse_tool_calls(text).calls
            pending = calls[0].name if calls else None
            yield role, text, pending or ""
        elif role == "tool" and pending is not None:
            yield role, text, pending
            pending = None


def messages_of(observation: Any) -> Sequence[Mapping[str, Any]]:
    """The chat observation's messages (a menu reads the whole conversation)."""
    if isinstance(observation, str):
        raise ValueError("a menu policy reads chat observations: make the env with obs_mode='chat'")
    return observation


def play(
    env: Any, policy: MenuAgent, rng: np.random.Generator, *, seed: int, options: Mapping[str, Any]
) -> tuple[Trajectory, Sample, list[int]]:
    """One episode (a chat-observation env): its trajectory, the decisions drawn (`Sample`) and the step
    index of each decision."""
    observation, info = env.reset(seed=seed, options=dict(options))
    traj = Trajectory(str(info.get(K.TASK_ID, seed)), seed, reset_info=info)
    sample = Sample("")
    steps_of: list[int] = []
    while True:
        before = len(sample.decisions)
        action = policy.act(policy.read(messages_of(observation)), rng, sample.decisions)
        steps_of += [len(traj.steps)] * (len(sample.decisions) - before)
        new, reward, terminated, truncated, info = env.step(action)
        traj.steps.append(Step(observation, action, float(reward), info))
        observation = new
        if terminated or truncated:
            traj.success, traj.terminated, traj.truncated = bool(info.get("success")), terminated, truncated
            return traj, sample, steps_of


def demonstrations(env: Any, menu: type[MenuAgent], episodes: int, *, seed: int) -> list[Sample]:
    """``episodes`` demonstrations on training tasks (``menu.demonstrator``), as ``menu``'s decisions (one
    `Sample` per episode)."""
    rng = np.random.default_rng(seed)
    reader = menu()
    samples = []
    for task_seed in rng.integers(0, 2**31 - 1, size=episodes):
        demonstrate = menu.demonstrator(env, int(task_seed))
        observation, info = env.reset(seed=int(task_seed), options=dict(TRAIN_OPTIONS))
        turns: list[tuple[Any, str]] = []
        done = False
        while not done:
            action = demonstrate(observation, info)
            turns.append((reader.read(messages_of(observation)), action))
            observation, _, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        samples.append(Sample("", menu.episode_decisions(turns)))
    return samples


@dataclass
class Args(SoftmaxGRPOArgs):
    """GRPO on a menu policy: ``steps`` × ``tasks_per_step`` tasks × ``group_size`` episodes, after a
    behaviour-cloning warm start on ``demos`` demonstrations."""

    menu: str = "retail"
    """Which menu (`MENUS`: ``retail``, ``telecom``); it must match the env's domain."""
    env: str = "papergym/VoiceService-v0"
    """The env id the policy trains on."""
    env_kw: list[str] = field(
        default_factory=lambda: ["channel=simulated", "obs_mode=chat", "format_penalty=0", "max_steps=16"]
    )
    """The simulated speech channel, chat observations, no format term, 16 steps."""
    wrapper: str | None = None
    """A wrapper of the training envs (a `papergym.wrappers.WRAPPERS` name, e.g. ``process_reward``)."""
    wrapper_kw: list[str] = field(default_factory=list)
    """The wrapper's kwargs as key=value (e.g. ``max_calls=4`` for ``process_reward``)."""
    advantage_hook: str | None = None
    """An `AdvantageHook` name of `papergym.credit.ADVANTAGE_HOOKS` (IAPO: ``influence``), applied per turn;
    None: one advantage per episode (flat credit)."""
    advantage_hook_kw: list[str] = field(default_factory=list)
    """The hook's kwargs as key=value (e.g. ``noise=0.2`` for ``influence``)."""
    optimizer: str = "adam"
    """GRPO's optimizer on the logits (`SoftmaxHeads.OPTIMIZERS`; ``sgd``: per-decision weights keep their
    magnitudes, see `SoftmaxHeads`)."""
    demos: int = 16
    """Demonstrations of the warm start (inferred; sets how rarely the base succeeds)."""
    demo_steps: int = 50
    """Behaviour-cloning steps on them."""
    demo_lr: float = 0.1
    """Their Adam step size."""
    demo_seed: int = 12345
    """Seeds the demonstrations' tasks (the same warm start for every arm and training seed)."""


StepCallback = Callable[[int, dict[str, float], list[Trajectory]], None]


def warm_policy(args: Args) -> MenuAgent:
    """A fresh ``args.menu`` policy behaviour-cloned on ``args.demos`` demonstrations (no wrapper: the warm
    start is the same for every arm)."""
    menu = menu_class(args.menu)
    policy = menu(lr=args.lr, epochs=args.epochs, optimizer=args.optimizer)
    env = make_env(args.env, args.env_kw)
    try:
        policy.heads.imitate(
            demonstrations(env, menu, args.demos, seed=args.demo_seed), steps=args.demo_steps, lr=args.demo_lr
        )
    finally:
        env.close()
    return policy


def train(args: Args, *, on_step: StepCallback | None = None) -> MenuAgent:
    """The warm start, then GRPO on ``args.env`` (wrapped in ``args.wrapper``): every step,
    ``tasks_per_step`` train-split tasks, ``group_size`` episodes each, rewards the episodes' returns,
    advantages group-normalised (and passed through ``advantage_hook``, per turn, when one is named).
    ``on_step(step, metrics, trajectories)`` gets the step's mean return, success and loss and its
    episodes."""
    require("torch", "llm")  # a clear error before any episode is played
    if args.advantage_hook_kw and args.advantage_hook is None:
        raise ValueError("advantage_hook_kw configures advantage_hook: name the hook")
    hook = resolve(args.advantage_hook, ADVANTAGE_HOOKS, **parse_kwargs(args.advantage_hook_kw))
    policy = warm_policy(args)
    env = make_env(args.env, args.env_kw, args.wrapper, args.wrapper_kw)
    rng = np.random.default_rng(args.seed)
    try:
        for step in range(args.steps):
            groups, samples, steps_of = sample_groups(env, policy, play, rng, args, TRAIN_OPTIONS)
            rewards = grpo.group_rewards(groups, None)
            advantages = (
                group_advantages(rewards).flatten().tolist()
                if hook is None
                else decision_advantages(groups, rewards, steps_of, hook)
            )
            loss = policy.heads.update(samples, advantages)
            if on_step is not None:
                trajs = [t for g in groups for t in g]
                metrics = {
                    "reward": float(np.mean([t.total_reward for t in trajs])),
                    "success": float(np.mean([t.success for t in trajs])),
                    "loss": loss,
                }
                on_step(step, metrics, trajs)
    finally:
        env.close()
    return policy
