"""The ``papergym`` command: list | play | eval | view | passk | demo | render | bench | train | reproduce.

The command line is the one place that prints; library code logs.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym

import papergym
from papergym.backends.policy import parse_policy_spec
from papergym.baselines.run import parse_kwargs, wilson_interval
from papergym.core import info_keys as K
from papergym.core.errors import BackendError, DependencyNotInstalled
from papergym.core.trajectory import OraclePolicy, Policy, RandomPolicy, Trajectory, rollout
from papergym.viewer.recording import episode_summary
from papergym.viewer.report import write_report
from papergym.viewer.screens import EpisodeRecorder

POLICIES = {"oracle": OraclePolicy, "random": RandomPolicy}


def parse_env_kwargs(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` pairs; a value is read as JSON when it parses (``difficulty=2``), else as a string."""
    try:
        return parse_kwargs(pairs)
    except ValueError as exc:
        raise SystemExit(f"--kw takes key=value: {exc}") from exc


POLICY_HELP = (
    "oracle | random | hf:PATH (a local checkpoint directory) | openai:URL#MODEL (an OpenAI-compatible "
    "server, e.g. vLLM); a model spec may end in ?cache=PATH&temperature=T&max_tokens=N "
    "(hf: also device=, dtype=; openai: also timeout=, max_retries=, backoff_s=)"
)


def make_policy(name: str) -> Policy:
    """The policy named ``name``: ``oracle``, ``random``, or a model spec (`parse_policy_spec`)."""
    if name in POLICIES:
        return POLICIES[name]()
    try:
        policy = parse_policy_spec(name)
    except (ValueError, DependencyNotInstalled) as exc:
        raise SystemExit(f"--policy {name}: {exc}") from exc
    if policy is None:
        raise SystemExit(
            f"unknown policy {name!r}; choose from {sorted(POLICIES)}, hf:PATH or openai:URL#MODEL"
        )
    return policy


def _progress(iterable: Iterable[int], total: int, desc: str, enabled: bool) -> Iterable[int]:
    if not enabled:
        return iterable
    try:
        from tqdm import tqdm
    except ImportError:  # the bar is a nicety: without the `train` extra, run without it
        return iterable
    return tqdm(iterable, total=total, desc=desc, file=sys.stderr, leave=False)


@dataclass
class FailedTrajectory(Trajectory):
    """An episode cut short because the policy's model backend raised `BackendError`.

    Attributes:
        error: ``{"type", "message", "retryable"}``.
        actions: the actions taken before the fault (their rewards are not known: the episode's
            return is recorded as 0).
    """

    error: dict[str, Any] = field(default_factory=dict)
    actions: int = 0


class _Tracked:
    """Forwards to a policy and remembers the reset info and the actions taken (for a failed episode)."""

    def __init__(self, policy: Policy, recorder: EpisodeRecorder | None = None) -> None:
        self.policy = policy
        self.recorder = recorder
        self.actions = 0
        self.first_info: Mapping[str, Any] = {}

    def bind(self, env: gym.Env) -> None:
        if self.recorder is not None:
            self.recorder.bind(env)
        bind = getattr(self.policy, "bind", None)
        if callable(bind):
            bind(env)

    def reset(self, *, seed: int) -> None:
        self.actions, self.first_info = 0, {}
        self.policy.reset(seed=seed)

    def __call__(self, observation: Any, info: Mapping[str, Any]) -> Any:
        if self.actions == 0:
            self.first_info = info
        if self.recorder is not None:
            self.recorder.before_action()
        action = self.policy(observation, info)
        self.actions += 1
        return action


def _play(env: gym.Env, policy: _Tracked, *, seed: int, options: dict[str, Any] | None) -> Trajectory:
    """One episode; a `BackendError` from the policy becomes a `FailedTrajectory` (the env's own
    backend faults already end the episode with ``truncated`` and ``info["error"]``)."""
    try:
        return rollout(env, policy, seed=seed, options=options)
    except BackendError as exc:
        error = {"type": type(exc).__name__, "message": str(exc), "retryable": exc.retryable}
        return FailedTrajectory(
            task_id=str(policy.first_info.get(K.TASK_ID, "")),
            seed=seed,
            truncated=True,
            reset_info=policy.first_info,
            error=error,
            actions=policy.actions,
        )


def evaluate(
    env_id: str,
    policy_name: str,
    *,
    episodes: int,
    seed: int,
    env_kwargs: dict[str, Any],
    split: str | None = None,
    progress: bool = True,
    recorder: EpisodeRecorder | None = None,
) -> list[Trajectory]:
    """Play ``episodes`` episodes with seeds ``seed, seed+1, ...``.

    An episode whose policy backend fails (`BackendError`) is returned as a `FailedTrajectory`
    and the evaluation goes on. With a ``recorder``, each episode's step records (and screens)
    are collected in ``recorder.steps``.
    """
    env = gym.make(env_id, **env_kwargs)
    policy = _Tracked(make_policy(policy_name), recorder)
    options = {"split": split} if split else None
    trajectories = []
    try:
        for i in _progress(range(episodes), episodes, f"{env_id} {policy_name}", progress):
            traj = _play(env, policy, seed=seed + i, options=options)
            if recorder is not None:
                recorder.finish(traj)
            trajectories.append(traj)
        return trajectories
    finally:
        env.close()


def episode_record(i: int, traj: Trajectory) -> dict[str, Any]:
    record = episode_summary(i, traj)
    if isinstance(traj, FailedTrajectory):
        record["steps"] = traj.actions
        record["error"] = traj.error
    elif K.ERROR in traj.final_info:  # an env backend fault (the env truncated the episode)
        record["error"] = traj.final_info[K.ERROR]
    return record


def _summary(trajectories: list[Trajectory]) -> str:
    wins = sum(t.success for t in trajectories)
    low, high = wilson_interval(wins, len(trajectories))
    return f"{wins / max(1, len(trajectories)):.3f} [{low:.3f}, {high:.3f}]"


def cmd_list(args: argparse.Namespace) -> int:
    entries = [*papergym.CATALOGUE, *papergym.MULTIAGENT_CATALOGUE]
    width = max(len(e.id) for e in entries)
    for e in papergym.CATALOGUE:
        print(f"{e.id:<{width}}  {e.paper}: {e.summary}")
    for m in papergym.MULTIAGENT_CATALOGUE:
        print(f"{m.id:<{width}}  {m.paper}: {m.summary} [multi-agent: papergym.make_multiagent]")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    kwargs = parse_env_kwargs(args.kw)
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", args.env_id)
    policy_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", args.policy)[:80]
    out = Path(args.out or f"runs/eval/{name}_{policy_name}_s{args.seed}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    recorder = None if args.no_steps else EpisodeRecorder(out, screens=not args.no_screens)
    trajectories = evaluate(
        args.env_id,
        args.policy,
        episodes=args.episodes,
        seed=args.seed,
        env_kwargs=kwargs,
        split=args.split,
        recorder=recorder,
    )
    with out.open("w", encoding="utf-8") as f:
        for i, traj in enumerate(trajectories):
            record = {**episode_record(i, traj), "env": args.env_id}
            if recorder is not None:
                record["trace"] = recorder.steps[i]
            f.write(json.dumps(record) + "\n")
    errors = sum(isinstance(t, FailedTrajectory) for t in trajectories)
    failed = f", {errors} ended by a backend error (counted as failures)" if errors else ""
    summary = _summary(trajectories)
    print(f"{args.env_id} {args.policy}: success {summary} (95% Wilson CI), n={args.episodes}{failed}")
    print(f"episodes written to {out}")
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    out = write_report(Path(args.run), Path(args.out) if args.out else None)
    print(f"report written to {out}")
    return 0


def _demo_episodes(env_id: str, variant: Mapping[str, Any], episodes: int) -> int:
    """The demo's episodes for one variant: fewer where the env asks (``contract_budget``, real speech)."""
    env = gym.make(env_id, **variant)
    try:
        budget = getattr(env.unwrapped, "contract_budget", None) or {}
    finally:
        env.close()
    return min(episodes, int(budget.get("demo_episodes", episodes)))


def cmd_demo(args: argparse.Namespace) -> int:
    rows = []
    for entry in papergym.CATALOGUE:
        for variant in entry.contract_variants():
            label = ", ".join(f"{k}={v}" for k, v in variant.items()) or "default"
            try:
                episodes = _demo_episodes(entry.id, variant, args.episodes)
            except DependencyNotInstalled as exc:
                rows.append((entry.id, label, "-", f"skipped: {exc}", ""))
                continue
            cells = [
                _summary(
                    evaluate(
                        entry.id,
                        p,
                        episodes=episodes,
                        seed=args.seed,
                        env_kwargs=variant,
                        progress=False,
                    )
                )
                for p in ("oracle", "random")
            ]
            rows.append((entry.id, label, str(episodes), *cells))
    header = ("id", "variant", "n", "oracle success [95% CI]", "random success [95% CI]")
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(
        f"Success over n episodes per cell (seeds {args.seed}..{args.seed}+n-1; n = {args.episodes}, "
        "fewer on the real-speech channels, where every turn runs TTS and ASR):"
    )
    for row in [header, tuple("-" * w for w in widths), *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    return 0


def cmd_passk(args: argparse.Namespace) -> int:
    from papergym.baselines.passk import evaluate_pass_at_k

    kwargs = parse_env_kwargs(args.kw)
    policy = make_policy(args.policy)
    options = {"split": args.split} if args.split else None
    result = evaluate_pass_at_k(
        lambda: gym.make(args.env_id, **kwargs),
        policy,
        tasks=args.tasks,
        n=args.n,
        ks=args.k,
        seed=args.seed,
        options=options,
    )
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(json.dumps(t) + "\n" for t in result.tasks), encoding="utf-8")
    failed = sum("error" in t for t in result.tasks)
    scores = "  ".join(f"pass@{k} {v:.3f}" for k, v in result.scores.items())
    summary = scores or "no task evaluated"
    print(f"{args.env_id} {args.policy}: {summary} ({args.tasks - failed} tasks, n={args.n})")
    if failed:
        print(f"{failed} task(s) left out after a backend error")
    return 0


def cmd_play(args: argparse.Namespace) -> int:
    env = gym.make(args.env_id, **parse_env_kwargs(args.kw))
    obs, info = env.reset(seed=args.seed)
    print(f"task {info.get(K.TASK_ID)}  (commands: /oracle shows the oracle's action, /quit ends)\n")
    print(obs)
    total = 0.0
    while True:
        try:
            action = input("\n> ")
        except EOFError:
            return 0
        if action == "/quit":
            return 0
        if action == "/oracle":
            print(env.unwrapped.oracle_action())
            continue
        obs, reward, terminated, truncated, info = env.step(action.replace("\\n", "\n"))
        total += reward
        print(f"\n{obs}\n[reward {reward:+.3f}  components {info.get(K.REWARD_COMPONENTS)}]")
        if terminated or truncated:
            print(f"episode over: success={info.get(K.SUCCESS)} return={total:+.3f}")
            return 0


def cmd_bench(args: argparse.Namespace) -> int:
    """Write the speed tables: per-id latency (env_speed.py), then scale-out and memory (scaleout.py).

    Each script runs in its own interpreter, as ``python benchmarks/X.py`` would (its folder on the path,
    a fresh process for the memory figures).
    """
    folder = Path(__file__).resolve().parents[1] / "benchmarks"
    scripts = [
        ("env_speed.py", ["--repeats", str(args.repeats)]),
        ("scaleout.py", ["--episodes", str(args.episodes)]),
    ]
    for name, extra in scripts:
        script = folder / name
        if not script.exists():
            raise SystemExit(f"papergym bench runs benchmarks/{name} from a source checkout; none found")
        write = ["--write", str(Path(args.write).resolve())] if args.write else []
        done = subprocess.run([sys.executable, str(script), *write, *extra], check=False)
        if done.returncode != 0:
            raise SystemExit(f"benchmarks/{name} failed (exit status {done.returncode})")
    return 0


TRAINERS = {
    "sft": "papergym.baselines.sft:main",
    "grpo": "papergym.baselines.grpo:main",
    "es": "papergym.baselines.es:main",
    "ttpo": "papergym.baselines.ttpo:main",
    "mopd": "papergym.baselines.mopd:main",
    "merge": "papergym.baselines.merge:main",
    "jzero": "papergym.baselines.jzero:main",
    "rdpo": "papergym.baselines.rdpo:main",
    "world_model": "papergym.baselines.world_model:main",
    "induction": "papergym.baselines.induction:main",
}
"""``papergym train ALGO``: a trainer's ``main(args) -> dict``; its module's ``Args`` is the command line."""


def cmd_train(args: argparse.Namespace) -> int:
    import importlib

    from papergym.core.errors import require

    if args.algo not in TRAINERS:
        raise SystemExit(f"unknown trainer {args.algo!r}; choose from {sorted(TRAINERS)}")
    tyro = require("tyro", "train")
    module_name, _, function = TRAINERS[args.algo].partition(":")
    module = importlib.import_module(module_name)
    config = tyro.cli(module.Args, args=args.rest, prog=f"papergym train {args.algo}")
    result = getattr(module, function)(config)
    for key in ("success_before", "success_after"):
        if isinstance(result.get(key), dict):
            r = result[key]
            interval = f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
            print(f"{key}: {r['success']:.3f} {interval} (95% Wilson CI, n={int(r['n'])})")
    shown = {k: v for k, v in result.items() if not isinstance(v, dict)}
    print(json.dumps(shown, default=str))
    return 0


def cmd_reproduce(args: argparse.Namespace) -> int:
    """``papergym reproduce NAME [flags]`` (DESIGN.md §Reproductions); ``--list`` prints the names."""
    from papergym.reproduce import driver

    if args.list or not args.name:
        for name, ready in driver.available().items():
            print(f"{name:12s} {'ready' if ready else 'not written yet'}")
        return 0
    try:
        summary = driver.main(args.name, args.rest)
    except ValueError as exc:
        raise SystemExit(str(exc)) from exc
    out = summary.get("out", "")
    print(f"results: {out}/results.json  table: {out}/table.md" if out else json.dumps(list(summary)))
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    """Write a PNG of every screen of an oracle episode (envs with a screen: render_mode="rgb_array")."""
    kwargs = parse_env_kwargs(args.kw)
    if "rgb_array" not in gym.make(args.env_id, **kwargs).unwrapped.metadata.get("render_modes", ()):
        raise SystemExit(f"{args.env_id} has no screen to render (no rgb_array render mode)")
    env = gym.make(args.env_id, render_mode="rgb_array", **kwargs)
    from papergym.core.errors import require  # local: keeps this command's edit in one place

    image = require("PIL.Image", "vision")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    options = {"template": args.template} if args.template else None
    _, info = env.reset(seed=args.seed, options=options)
    task_id = info.get(K.TASK_ID, "?")
    frames = [env.render()]
    for _ in range(args.max_steps):
        _, _, terminated, truncated, info = env.step(env.unwrapped.oracle_action())
        frames.append(env.render())
        if terminated or truncated:
            break
    for i, frame in enumerate(frames):
        image.fromarray(frame).save(out / f"step_{i:03d}.png")
    print(f"{len(frames)} screens of {task_id} written to {out} (success={info.get(K.SUCCESS)})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="papergym", description=__doc__)
    parser.add_argument("--version", action="version", version=papergym.__version__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the registered ids").set_defaults(func=cmd_list)

    play = sub.add_parser("play", help="play an env in the terminal")
    play.add_argument("env_id")
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--kw", action="append", default=[], metavar="KEY=VALUE", help="env constructor kwargs")
    play.set_defaults(func=cmd_play)

    ev = sub.add_parser("eval", help="evaluate a policy: success rate with a 95%% CI, JSONL of every episode")
    ev.add_argument("env_id")
    ev.add_argument("--policy", default="oracle", help=POLICY_HELP)
    ev.add_argument("--episodes", type=int, default=100)
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--split", choices=("train", "test"), default=None)
    ev.add_argument("--kw", action="append", default=[], metavar="KEY=VALUE", help="env constructor kwargs")
    ev.add_argument("--out", default=None, help="JSONL path (default runs/eval/<id>_<policy>_s<seed>.jsonl)")
    ev.add_argument("--no-steps", action="store_true", help="episode summaries only (no per-step trace)")
    ev.add_argument("--no-screens", action="store_true", help="no screen PNGs in RUN.assets/ (GUI envs)")
    ev.set_defaults(func=cmd_eval)

    view = sub.add_parser("view", help="a self-contained static HTML report of an eval JSONL")
    view.add_argument("run", help="RUN.jsonl written by `papergym eval`")
    view.add_argument("--out", default=None, help="HTML path (default RUN.html beside the JSONL)")
    view.set_defaults(func=cmd_view)

    demo = sub.add_parser("demo", help="oracle and random policy on every id: a success table")
    demo.add_argument("--episodes", type=int, default=50)
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=cmd_demo)

    passk = sub.add_parser("passk", help="unbiased pass@k of a policy: n samples per task")
    passk.add_argument("env_id")
    passk.add_argument("--policy", default="random", help=POLICY_HELP)
    passk.add_argument("--tasks", type=int, default=50)
    passk.add_argument("--n", type=int, default=8, help="samples per task")
    passk.add_argument("--k", type=int, nargs="+", default=[1, 4, 8])
    passk.add_argument("--seed", type=int, default=0)
    passk.add_argument("--split", choices=("train", "test"), default=None)
    passk.add_argument(
        "--kw", action="append", default=[], metavar="KEY=VALUE", help="env constructor kwargs"
    )
    passk.add_argument("--out", default=None, help="JSONL of per-task counts")
    passk.set_defaults(func=cmd_passk)

    render = sub.add_parser("render", help="PNGs of the screens of an oracle episode (GUI envs)")
    render.add_argument("env_id")
    render.add_argument("--seed", type=int, default=0)
    render.add_argument("--out", required=True, help="directory for step_000.png, step_001.png, ...")
    render.add_argument("--template", default=None, help="task template (MobileGUI: an AndroidWorld name)")
    render.add_argument("--max-steps", type=int, default=200)
    render.add_argument("--kw", action="append", default=[], metavar="KEY=VALUE", help="env kwargs")
    render.set_defaults(func=cmd_render)

    bench = sub.add_parser("bench", help="speed tables (benchmarks/env_speed.py, benchmarks/scaleout.py)")
    bench.add_argument("--write", default=None, help="markdown file to write the table into")
    bench.add_argument("--repeats", type=int, default=2000)
    bench.add_argument("--episodes", type=int, default=16, help="episodes per scale-out cell")
    bench.set_defaults(func=cmd_bench)

    train = sub.add_parser(
        "train", help="run a baseline trainer: papergym train ALGO --env ID ... (papergym train ALGO -h)"
    )
    train.add_argument("algo", help=f"one of {', '.join(TRAINERS)}")
    train.add_argument("rest", nargs=argparse.REMAINDER, help="the trainer's own flags")
    train.set_defaults(func=cmd_train)

    repro = sub.add_parser(
        "reproduce", help="reproduce a paper's headline effect by training: papergym reproduce NAME [--smoke]"
    )
    repro.add_argument("name", nargs="?", default=None, help="a reproduction (see --list)")
    repro.add_argument("--list", action="store_true", help="list the reproductions and which are written")
    repro.add_argument("rest", nargs=argparse.REMAINDER, help="the reproduction's own flags (NAME -h)")
    repro.set_defaults(func=cmd_reproduce)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
