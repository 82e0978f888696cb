"""What every trainer's run needs, once: metrics to JSONL, a tqdm bar, optional TensorBoard, PNG curves at
the end, a checkpoint every N steps, ``--resume``, and the shared evaluation with Wilson intervals.

A run directory holds ``metrics.jsonl`` (one JSON object per logged step), ``checkpoints/step_N/``
(the model in safetensors, its tokenizer, and ``trainer_state.pt``: step, optimizer state and any extra
state), ``final/`` (the last model), ``curves.png`` and, with TensorBoard on, ``tb/``. Resuming loads the
newest checkpoint and drops the metrics logged after it, so a killed run continues as if it never
stopped (trainers derive every seed from the run seed and the step).

`RunArgs` (and `PolicyRunArgs`, for trainers of a causal LM) are the flags every trainer shares, with one
set of defaults; each trainer's ``Args`` inherits them (flat field names, flat ``tyro`` flags) and
`start_run` turns them into a `Run`.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import math
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym

from papergym.core.errors import DependencyNotInstalled, require

if TYPE_CHECKING:
    from papergym.baselines.policy import PolicyModel

logger = logging.getLogger(__name__)

_STATE = "trainer_state.pt"


def wilson_interval(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a success rate (95% for z = 1.96).

    >>> tuple(round(x, 3) for x in wilson_interval(8, 10))
    (0.49, 0.943)
    """
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass
class RunDirArgs:
    """The flags of every trainer's run directory and process (each trainer's ``Args`` inherits them)."""

    out: str = "runs/run"
    """The run directory (metrics.jsonl, checkpoints/, final/, curves.png)."""
    seed: int = 0
    """The run seed: every task, sampling and perturbation seed derives from it and the step."""
    checkpoint_every: int = 50
    """Save a resumable checkpoint every N steps (0: only the final model)."""
    resume: bool = False
    """Continue from the newest checkpoint in out."""
    progress: bool = True
    """Show a tqdm progress bar."""
    tensorboard: bool = False
    """Also write TensorBoard scalars to out/tb."""
    threads: int = 1
    """Torch CPU threads (0: torch's default; 1 is often fastest on a small shared machine)."""


@dataclass
class RunArgs(RunDirArgs):
    """The flags of a trainer's run on an env (one set of defaults)."""

    env: str = "papergym/Reasoning-v0"
    """The env id to train on."""
    env_kw: list[str] = field(default_factory=list)
    """Env constructor kwargs as key=value (a value is parsed as JSON when it can be), e.g. domain=math."""


@dataclass
class PolicyRunArgs(RunArgs):
    """The flags of a run that trains a causal LM policy."""

    model: str = "tiny"
    """"tiny" (a fresh tiny Qwen2 built in code) or a local checkpoint directory (SFT, ES or any HF model)."""
    device: str = "cpu"
    """The torch device."""
    eval_tasks: int = 0
    """Held-out test tasks for a greedy success rate before and after training (0: skip)."""
    eval_batch: int = 64
    """Episodes per evaluation batch."""
    eval_trace: bool = True
    """Record each evaluation's episodes step by step for `papergym view` (out/eval_before.jsonl,
    out/eval_after.jsonl; screens and audio in their .assets/ folders)."""


def start_run(args: RunDirArgs, *, total_steps: int, desc: str, keep_last: int = 0) -> Run:
    """The `Run` of ``args`` (directory, resume, bar, TensorBoard, checkpoint period); sets the threads."""
    set_threads(args.threads)
    return Run(
        args.out,
        total_steps=total_steps,
        resume=args.resume,
        progress=args.progress,
        tensorboard=args.tensorboard,
        desc=desc,
        checkpoint_every=args.checkpoint_every,
        keep_last=keep_last,
    )


def evaluate_args(
    policy: PolicyModel, args: PolicyRunArgs, *, max_new_tokens: int, when: str = "after"
) -> dict[str, float]:
    """`evaluate_policy` on ``args.eval_tasks`` held-out tasks of ``args.env`` (greedy); with
    ``args.eval_trace`` its episodes go to ``out/eval_<when>.jsonl`` (``when``: "before" or "after"
    training)."""
    return evaluate_policy(
        policy,
        args.env,
        parse_kwargs(args.env_kw),
        tasks=args.eval_tasks,
        batch=args.eval_batch,
        max_new_tokens=max_new_tokens,
        trace=Path(args.out) / f"eval_{when}.jsonl" if args.eval_trace else None,
    )


class Run:
    """A training run's directory, log and checkpoints.

    Args:
        out: the run directory (created).
        total_steps: the step budget (for the progress bar).
        resume: continue from the newest checkpoint in ``out`` (fresh start if there is none).
        progress: show a tqdm bar on stderr.
        tensorboard: also write TensorBoard scalars (needs the ``tensorboard`` package).
        desc: the progress bar's label.
        checkpoint_every: `checkpoint` saves after every this many completed steps (0: never).
        keep_last: keep only the newest this many checkpoints (0: all), for model-sized ones.

    Attributes:
        start_step: the first step to run (0, or the resumed checkpoint's step).
        resumed_state: the resumed ``trainer_state.pt`` contents, or None.
    """

    def __init__(
        self,
        out: str | Path,
        *,
        total_steps: int,
        resume: bool = False,
        progress: bool = True,
        tensorboard: bool = False,
        desc: str = "train",
        checkpoint_every: int = 0,
        keep_last: int = 0,
    ) -> None:
        self.out = Path(out)
        self.checkpoint_every = int(checkpoint_every)
        self.keep_last = int(keep_last)
        self.out.mkdir(parents=True, exist_ok=True)
        self.metrics_path = self.out / "metrics.jsonl"
        self.total_steps = int(total_steps)
        self.start_step = 0
        self.resumed_state: dict[str, Any] | None = None
        checkpoint = latest_checkpoint(self.out) if resume else None
        if checkpoint is not None:
            torch = require("torch", "llm")
            self.resumed_state = torch.load(checkpoint / _STATE, weights_only=False)
            self.start_step = int(self.resumed_state["step"])
            self._truncate_metrics(self.start_step)
            logger.info("resuming %s from step %d", self.out, self.start_step)
        elif self.metrics_path.exists():
            self.metrics_path.unlink()  # a fresh run starts a fresh log
        self._bar = None
        if progress:
            try:
                from tqdm import tqdm
            except ImportError:  # the bar is a nicety: without the `train` extra, run without it
                tqdm = None
            if tqdm is not None:
                self._bar = tqdm(total=self.total_steps, initial=self.start_step, desc=desc, file=sys.stderr)
        self._tb = None
        if tensorboard:
            if importlib.util.find_spec("tensorboard") is None:
                raise DependencyNotInstalled(
                    "--tensorboard needs the tensorboard package: pip install tensorboard"
                )
            from torch.utils.tensorboard import SummaryWriter

            self._tb = SummaryWriter(str(self.out / "tb"))

    @property
    def checkpoint_model_path(self) -> Path | None:
        """The resumed checkpoint's model directory (load the policy from it), or None."""
        if self.resumed_state is None:
            return None
        return self.out / "checkpoints" / f"step_{self.start_step}"

    def log(self, step: int, metrics: Mapping[str, Any]) -> None:
        """Append one record (``{"step": step, **metrics}``) to the JSONL, the bar and TensorBoard."""
        record = {"step": int(step), **{k: _plain(v) for k, v in metrics.items()}}
        with self.metrics_path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(record, allow_nan=False) + "\n")
        if self._bar is not None:
            shown = {k: v for k, v in record.items() if isinstance(v, float)}
            self._bar.set_postfix({k: f"{v:.3g}" for k, v in list(shown.items())[:4]}, refresh=False)
            self._bar.update(max(0, int(step) + 1 - self._bar.n))
        if self._tb is not None:
            for key, value in record.items():
                if isinstance(value, (int, float)) and key != "step":
                    self._tb.add_scalar(key, value, int(step))

    def restore(self, optimizer: Any) -> None:
        """Load the resumed checkpoint's optimizer state into ``optimizer`` (nothing on a fresh run)."""
        if self.resumed_state is not None:
            optimizer.load_state_dict(self.resumed_state["optimizer"])

    def checkpoint(self, done: int, *save: Any, **kwargs: Any) -> Path | None:
        """`save` (same arguments) when ``done`` completed steps are a multiple of ``checkpoint_every``."""
        if not self.checkpoint_every or done % self.checkpoint_every:
            return None
        return self.save(done, *save, **kwargs)

    def save(
        self,
        step: int,
        model: Any = None,
        tokenizer: Any = None,
        optimizer: Any = None,
        extra: Mapping[str, Any] | None = None,
        *,
        write_model: Callable[[Path], None] | None = None,
    ) -> Path:
        """Write ``checkpoints/step_{step}``: the model, tokenizer and ``trainer_state.pt``. ``step`` is the
        number of completed steps (the step a resumed run starts at).

        Args:
            step: completed steps.
            model, tokenizer: saved with ``save_pretrained`` (when given).
            optimizer: its state dict goes into the state (when given).
            extra: more state (any picklable values).
            write_model: writes the model into the directory instead of ``save_pretrained``.
        """
        torch = require("torch", "llm")
        path = self.out / "checkpoints" / f"step_{step}"
        path.mkdir(parents=True, exist_ok=True)
        if write_model is not None:
            write_model(path)
        elif model is not None:
            model.save_pretrained(path, safe_serialization=True)
        if tokenizer is not None:
            tokenizer.save_pretrained(path)
        state = {"step": int(step), **dict(extra or {})}
        if optimizer is not None:
            state["optimizer"] = optimizer.state_dict()
        torch.save(state, path / (_STATE + ".tmp"))
        (path / (_STATE + ".tmp")).replace(
            path / _STATE
        )  # the state file last: its presence marks a whole checkpoint
        if self.keep_last > 0:
            done = sorted(_complete_checkpoints(self.out), key=lambda p: int(p.name[5:]))
            for old in done[: -self.keep_last]:
                shutil.rmtree(old)
        return path

    def finish(
        self, model: Any = None, tokenizer: Any = None, *, keys: Sequence[str] | None = None
    ) -> Path | None:
        """Close the bar and TensorBoard, save ``final/`` (when given a model) and draw ``curves.png``
        (``keys``: the metrics drawn, default every numeric one)."""
        if self._bar is not None:
            self._bar.close()
        if self._tb is not None:
            self._tb.close()
        if model is not None and tokenizer is not None:
            final = self.out / "final"
            model.save_pretrained(final, safe_serialization=True)
            tokenizer.save_pretrained(final)
        return plot_curves(self.metrics_path, self.out / "curves.png", keys=keys)

    def _truncate_metrics(self, step: int) -> None:
        if not self.metrics_path.exists():
            return
        lines = self.metrics_path.read_text(encoding="utf-8").splitlines()
        kept = [line for line in lines if line.strip() and json.loads(line).get("step", -1) < step]
        self.metrics_path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")


def latest_checkpoint(out: str | Path) -> Path | None:
    """The newest complete checkpoint directory under ``out/checkpoints``, or None."""
    return max(_complete_checkpoints(out), key=lambda p: int(p.name[5:]), default=None)


def _complete_checkpoints(out: str | Path) -> list[Path]:
    root = Path(out) / "checkpoints"
    if not root.is_dir():
        return []
    return [p for p in root.glob("step_*") if (p / _STATE).exists() and p.name[5:].isdigit()]


def _plain(value: Any) -> Any:
    """A JSON value: tensors and numpy scalars as numbers, NaN / inf as null (strict JSON)."""
    if hasattr(value, "item") and callable(value.item):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def read_metrics(path: str | Path) -> list[dict[str, Any]]:
    """The records of a ``metrics.jsonl``."""
    text = Path(path).read_text(encoding="utf-8") if Path(path).exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def plot_curves(metrics: str | Path, png: str | Path, *, keys: Sequence[str] | None = None) -> Path | None:
    """Draw each numeric metric against the step into one PNG (one panel per metric); None if no records.

    Args:
        metrics: the JSONL file.
        png: the image to write.
        keys: the metrics to draw (default: every numeric one, at most 12).
    """
    records = read_metrics(metrics)
    if not records:
        return None
    matplotlib = require("matplotlib", "train")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    numeric = [
        k
        for k in dict.fromkeys(k for r in records for k in r)
        if k != "step" and all(isinstance(r.get(k), (int, float, type(None))) for r in records)
    ]
    shown = list(keys) if keys is not None else numeric[:12]
    cols = min(3, len(shown)) or 1
    rows = math.ceil(len(shown) / cols) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 2.8 * rows), squeeze=False)
    for ax, key in zip(axes.flat, shown, strict=False):
        points = [(r["step"], r[key]) for r in records if isinstance(r.get(key), (int, float))]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="." if len(points) < 40 else None)
        ax.set_title(key, fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(shown) :]:
        ax.axis("off")
    fig.tight_layout()
    png = Path(png)
    fig.savefig(png, dpi=90)
    plt.close(fig)
    return png


def make_envs(env_id: str, env_kwargs: Mapping[str, Any], n: int) -> list[gym.Env]:
    """``n`` instances of ``env_id`` (isolated: one per rollout slot)."""
    return [gym.make(env_id, **dict(env_kwargs)) for _ in range(n)]


def split_options(env: gym.Env, split: str) -> dict[str, Any] | None:
    """``{"split": split}`` if the env has that split (``env.unwrapped.splits``), else None."""
    splits = getattr(env.unwrapped, "splits", ())
    return {"split": split} if split in splits else None


def evaluate_success(
    play: Callable[[Sequence[gym.Env], Sequence[int], dict[str, Any] | None], Sequence[bool]],
    envs: Sequence[gym.Env],
    *,
    tasks: int,
    seed: int,
    split: str = "test",
) -> dict[str, float]:
    """Success rate over ``tasks`` held-out tasks (seeds ``seed..seed+tasks-1``), with its 95% Wilson CI.

    Args:
        play: plays one batch of episodes (``envs``, their seeds, reset options) and returns successes.
        envs: the batch of envs (its length is the batch size).
        tasks: tasks to evaluate.
        seed: the first task seed.
        split: the split (used when the env has it).

    Returns:
        ``{"success", "ci_low", "ci_high", "n"}``.
    """
    options = split_options(envs[0], split)
    wins = 0
    for start in range(0, tasks, len(envs)):
        seeds = list(range(seed + start, seed + min(tasks, start + len(envs))))
        wins += sum(bool(s) for s in play(envs[: len(seeds)], seeds, options))
    low, high = wilson_interval(wins, tasks)
    return {"success": wins / max(1, tasks), "ci_low": low, "ci_high": high, "n": float(tasks)}


def evaluate_policy(
    policy: PolicyModel,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    *,
    tasks: int,
    batch: int = 64,
    max_new_tokens: int = 64,
    temperature: float = 0.0,
    seed: int = 10**6,
    split: str = "test",
    trace: str | Path | None = None,
) -> dict[str, float]:
    """A policy's success rate on ``tasks`` held-out tasks (greedy by default), with its 95% Wilson CI.

    Task ``i`` is the one ``reset(seed=seed + i, options={"split": split})`` draws (the split only when the
    env has it); ``batch`` episodes play in lockstep. With ``trace`` (a JSONL path) the episodes are
    written there step by step for `papergym view` (`papergym.viewer.write_episodes`).
    """
    from papergym.baselines.rollout import run_episodes

    envs = make_envs(env_id, env_kwargs, max(1, min(batch, tasks)))

    def play(now: Sequence[gym.Env], seeds: Sequence[int], options: dict[str, Any] | None) -> list[bool]:
        episodes = run_episodes(
            policy,
            now,
            seeds=seeds,
            sample_seed=seed,
            options=options,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
        )
        played.extend(e.trajectory for e in episodes)
        return [e.trajectory.success for e in episodes]

    played: list[Any] = []
    try:
        result = evaluate_success(play, envs, tasks=tasks, seed=seed, split=split)
    finally:
        for env in envs:
            env.close()
    if trace is not None:
        from papergym.viewer.recording import write_episodes

        write_episodes(Path(trace), played, env_id=env_id)
    return result


def parse_kwargs(pairs: Sequence[str]) -> dict[str, Any]:
    """``key=value`` pairs; a value is read as JSON when it parses (``difficulty=2``), else as a string."""
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"env kwargs are key=value, got {pair!r}")
        try:
            kwargs[key] = json.loads(value)
        except json.JSONDecodeError:
            kwargs[key] = value
    return kwargs


def set_threads(threads: int) -> None:
    """Use ``threads`` torch intra-op threads (0 leaves torch's default). One thread is often fastest on a
    busy 2-core machine, where threads spin against each other."""
    if threads > 0:
        require("torch", "llm").set_num_threads(int(threads))


def parameter_snapshot(model: Any) -> list[Any]:
    """Detached copies of ``model``'s parameters, the reference of `parameter_distance`."""
    return [p.detach().clone() for p in model.parameters()]


def parameter_distance(model: Any, snapshot: Sequence[Any]) -> float:
    """``‖θ − θ_0‖_2`` over all parameters, θ_0 being a `parameter_snapshot` of the same model."""
    torch = require("torch", "llm")
    with torch.no_grad():
        pairs = zip(model.parameters(), snapshot, strict=True)
        total = sum(float(torch.linalg.vector_norm(p - p0)) ** 2 for p, p0 in pairs)
    return math.sqrt(total)
