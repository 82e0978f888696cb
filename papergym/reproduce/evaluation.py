"""Held-out evaluation for the reproductions: many samples per task, batched, with per-task records.

`papergym.baselines.passk.evaluate_pass_at_k` plays any `Policy` one episode at a time; a reproduction
scores thousands of samples of the trainers' own `PolicyModel`, so this module plays them in lockstep
batches through `papergym.baselines.rollout.run_episodes` (the trainers' sampler) and keeps, per task,
how many of its ``n`` samples succeeded and the task's family (``info["domain"]`` where the env names
one). The unbiased pass@k estimator is `papergym.baselines.passk.pass_at_k`.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from papergym.baselines.passk import pass_at_k
from papergym.baselines.policy import PolicyModel
from papergym.baselines.run import make_envs, split_options
from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory, member_seed

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TaskSamples:
    """``n`` sampled attempts at one held-out task.

    Attributes:
        seed: the task's env seed.
        family: the task's family (its reset ``info`` value of the chosen key, else ``"all"``).
        n: samples drawn.
        correct: samples that succeeded.
        calls: tool calls the samples made (``info["tool_calls"]`` entries; 0 on tool-free envs).
        calls_ok: those that succeeded (``"ok"``).
    """

    seed: int
    family: str
    n: int
    correct: int
    calls: int = 0
    calls_ok: int = 0

    def pass_at(self, k: int) -> float:
        """The unbiased pass@k of this task (Chen et al. 2021)."""
        return pass_at_k(self.n, self.correct, k)


def _family(info: Mapping[str, Any], key: str) -> str:
    value = info.get(key)
    return "all" if value is None else f"{key} {value}" if key == "difficulty" else str(value)


def sample_tasks(
    policy: PolicyModel,
    env_id: str,
    env_kwargs: Mapping[str, Any],
    *,
    tasks: int,
    n: int,
    seed: int,
    split: str = "test",
    max_new_tokens: int = 64,
    temperature: float = 1.0,
    batch: int = 64,
    family_key: str = "domain",
    trace: str | Path | None = None,
    task_ids: Sequence[str] | None = None,
    on_episode: Callable[[int, Trajectory], None] | None = None,
    max_turns: int | None = None,
) -> list[TaskSamples]:
    """Sample ``n`` attempts at each of ``tasks`` held-out tasks (task ``j`` is ``reset(seed=seed + j)``).

    Attempts are played ``batch`` at a time in lockstep; attempt ``m`` of task ``j`` samples with its own
    seed derived from ``(seed, j, m)``, so a rerun gives the same records. A task's family is its reset
    ``info[family_key]`` (``"domain"``; ``"difficulty"`` gives ``"difficulty 2"``), else ``"all"``. With
    ``trace`` (a JSONL path) each task's first attempt is written there step by step for `papergym view`
    (`papergym.viewer.write_episodes`; one episode per task, so the file stays small at any ``n``).
    With ``task_ids`` (one per task, ``len(task_ids) == tasks``), task ``j`` is reset with the option
    ``{"task_id": task_ids[j]}`` instead of a split, so a fixed problem set (TestTime-v0's) is scored
    problem by problem. ``on_episode(j, trajectory)`` is called with every attempt's trajectory (task
    ``j``), for measures beyond success.
    ``max_turns`` cuts every attempt at that many actions (a failure unless it
    succeeded by then; None: the env's own limits).
    """
    if task_ids is not None and len(task_ids) != tasks:
        raise ValueError(f"got {len(task_ids)} task ids for {tasks} tasks")
    if tasks < 1 or n < 1 or batch < 1:
        raise ValueError(f"need tasks, n and batch >= 1; got tasks={tasks}, n={n}, batch={batch}")
    jobs = [(j, m) for j in range(tasks) for m in range(n)]
    envs = make_envs(env_id, dict(env_kwargs), min(batch, len(jobs)))
    options = split_options(envs[0], split)
    from papergym.baselines.rollout import run_episodes

    first: list[Any] = []  # each task's first attempt, in task order
    correct = np.zeros(tasks, dtype=int)
    calls = np.zeros((tasks, 2), dtype=int)  # tool calls made, and succeeded
    families = ["all"] * tasks
    try:
        for start in range(0, len(jobs), len(envs)):
            chunk = jobs[start : start + len(envs)]
            episodes = run_episodes(
                policy,
                envs[: len(chunk)],
                seeds=[seed + j for j, _ in chunk],
                sample_seed=member_seed(seed, start),
                options=options if task_ids is None else [{"task_id": task_ids[j]} for j, _ in chunk],
                max_new_tokens=max_new_tokens,
                temperature=temperature,
                max_turns=max_turns,
            )
            for (j, m), episode in zip(chunk, episodes, strict=True):
                if m == 0:
                    first.append(episode.trajectory)
                correct[j] += int(episode.trajectory.success)
                if on_episode is not None:
                    on_episode(j, episode.trajectory)
                calls[j] += tool_calls(episode.trajectory)
                families[j] = _family(episode.trajectory.reset_info, family_key)
    finally:
        for env in envs:
            env.close()
    if trace is not None:
        from papergym.viewer.recording import write_episodes

        write_episodes(Path(trace), first, env_id=env_id)
    return [
        TaskSamples(seed + j, families[j], n, int(correct[j]), int(calls[j, 0]), int(calls[j, 1]))
        for j in range(tasks)
    ]


def tool_calls(trajectory: Any) -> tuple[int, int]:
    """``(tool calls made, tool calls that succeeded)`` in one episode (``info["tool_calls"]``)."""
    made = [c for step in trajectory.steps for c in step.info.get(K.TOOL_CALLS) or ()]
    return len(made), sum(bool(c.get("ok")) for c in made)


def pass_at_k_matrix(per_seed: Sequence[Sequence[TaskSamples]], k: int) -> np.ndarray:
    """A ``(seeds, tasks)`` matrix of pass@k (the input of `.report.stratified_bootstrap`)."""
    return np.array([[t.pass_at(k) for t in tasks] for tasks in per_seed], dtype=float)


def families(tasks: Sequence[TaskSamples]) -> list[str]:
    """The task families present, sorted."""
    return sorted({t.family for t in tasks})


def restrict(per_seed: Sequence[Sequence[TaskSamples]], family: str) -> list[list[TaskSamples]]:
    """Only the tasks of ``family``, per seed (every seed evaluates the same tasks)."""
    return [[t for t in tasks if t.family == family] for tasks in per_seed]


def cached_scores(
    cache: Path, model: str, settings: Mapping[str, Any], evaluate: Callable[[], list[TaskSamples]]
) -> list[TaskSamples]:
    """``evaluate()``'s scores of the checkpoint directory ``model``, kept in the JSON-lines file ``cache``
    under a digest of the directory's path, its weight files and the evaluation ``settings``: an entry is
    reused only for the same checkpoint with the same weights scored the same way, so a resumed run does not
    re-score the checkpoints it already scored, and a checkpoint overwritten by a fresh run is scored again.
    (The path is part of the key so that every checkpoint gets its own evaluation trace.)"""
    weights = {  # read whole: evaluating the checkpoint loads it into memory anyway
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(Path(model).glob("*.safetensors"))
    }
    if not weights:
        raise FileNotFoundError(f"no *.safetensors in {model}: nothing to key its scores on")
    keyed = {"model": str(Path(model).resolve()), "settings": dict(settings), "weights": weights}
    key = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()
    if cache.exists():
        for line in cache.read_text().splitlines():
            entry = json.loads(line)
            if entry["key"] == key:
                logger.info("reusing the held-out scores of %s (%s)", model, cache)
                return [TaskSamples(**t) for t in entry["tasks"]]
    scores = evaluate()
    with cache.open("a") as f:
        f.write(json.dumps({"key": key, "model": model, "tasks": [asdict(t) for t in scores]}) + "\n")
    return scores
