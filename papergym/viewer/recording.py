"""Per-step records a viewer needs, with screens and audio written as files beside the JSONL.

A trainer's evaluation or ``papergym reproduce`` records an episode with::

    from papergym.viewer import AssetWriter, step_records
    assets = AssetWriter(Path("runs/x/eval.jsonl"))
    record["trace"] = step_records(trajectory, episode=i, assets=assets)

or a whole evaluation's episodes with `write_episodes` (what `papergym.baselines.run.evaluate_policy` and
`papergym.reproduce.evaluation.sample_tasks` do with ``trace=``).
"""

from __future__ import annotations

import io
import json
import logging
import wave
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from papergym.core import info_keys as K
from papergym.core.errors import DependencyNotInstalled
from papergym.core.trajectory import Trajectory

logger = logging.getLogger(__name__)

#: the info keys copied into each step record (plain data; anything else is left out)
STEP_INFO_KEYS = (
    K.PARSED_ACTION,
    K.TOOL_CALLS,
    K.TOOL_RESULTS,
    K.REWARD_COMPONENTS,
    K.CHECKS,
    K.INVALID_ACTION,
    K.SUCCESS,
    K.DB_DIFF,
)
SAMPLE_RATE = 16_000


def assets_dir(jsonl: Path) -> Path:
    """The folder beside ``RUN.jsonl`` that holds its screens and audio: ``RUN.assets/``."""
    return jsonl.with_suffix(".assets")


class AssetWriter:
    """Writes screens (PNG) and audio (WAV) beside a run's JSONL and returns their relative paths.

    Args:
        jsonl: the run's JSONL path; assets go to ``<jsonl stem>.assets/``.
    """

    def __init__(self, jsonl: Path) -> None:
        self.root = assets_dir(jsonl)
        self._base = jsonl.parent

    def _path(self, episode: int, step: int, tag: str, suffix: str) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        return self.root / f"ep{episode:04d}_step{step:02d}{tag}{suffix}"

    def screen(self, image: np.ndarray, *, episode: int, step: int, tag: str = "") -> str:
        """Save an ``(H, W, 3)`` uint8 screen as PNG; returns its path relative to the JSONL's folder."""
        try:
            from PIL import Image
        except ImportError as exc:
            raise DependencyNotInstalled('pip install "papergym[vision]"') from exc
        path = self._path(episode, step, tag, ".png")
        Image.fromarray(np.asarray(image, dtype=np.uint8)).save(path, compress_level=1)
        return path.relative_to(self._base).as_posix()

    def audio(self, waveform: np.ndarray, *, episode: int, step: int, tag: str = "") -> str:
        """Save a float waveform in [-1, 1] at 16 kHz as 16-bit WAV; returns its relative path."""
        path = self._path(episode, step, tag, ".wav")
        pcm = (np.clip(np.asarray(waveform, dtype=np.float32), -1.0, 1.0) * 32767).astype("<i2")
        buf = io.BytesIO()
        with wave.open(buf, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(SAMPLE_RATE)
            w.writeframes(pcm.tobytes())
        path.write_bytes(buf.getvalue())
        return path.relative_to(self._base).as_posix()


def _is_screen(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.ndim == 3 and x.shape[-1] in (3, 4)


def _is_audio(x: Any) -> bool:
    return isinstance(x, np.ndarray) and x.ndim == 1 and np.issubdtype(x.dtype, np.floating)


def _jsonable(value: Any) -> Any:
    """``value`` if it survives ``json.dumps``, else its ``repr`` (records stay plain data)."""
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return repr(value)
    return value


def observation_record(obs: Any, assets: AssetWriter, *, episode: int, step: int) -> dict[str, Any]:
    """The observation as ``text`` plus ``screen`` / ``audio`` file references where it holds them."""
    out: dict[str, Any] = {}
    if isinstance(obs, str):
        out["text"] = obs
    elif _is_screen(obs):
        out["screen"] = assets.screen(obs, episode=episode, step=step)
    elif isinstance(obs, tuple):  # chat mode: the last message is the new text
        out["text"] = str(obs[-1].get("content", "")) if obs else ""
    elif isinstance(obs, Mapping):
        for value in obs.values():
            if _is_audio(value):
                out["audio"] = assets.audio(value, episode=episode, step=step)
            elif _is_screen(value):
                out["screen"] = assets.screen(value, episode=episode, step=step)
            elif isinstance(value, str):
                out["text"] = value
    else:
        out["text"] = repr(obs)
    return out


def _action_record(action: Any, assets: AssetWriter, *, episode: int, step: int) -> dict[str, Any]:
    if isinstance(action, str):
        return {"action": action}
    if isinstance(action, Mapping):
        out: dict[str, Any] = {"action": str(action.get("text", ""))}
        for value in action.values():
            if _is_audio(value):
                out["action_audio"] = assets.audio(value, episode=episode, step=step, tag="_act")
        return out
    return {"action": repr(action)}


def step_records(
    traj: Trajectory,
    *,
    episode: int,
    assets: AssetWriter,
    screens: list[np.ndarray] | None = None,
    imagined: list[np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """One record per step: what the policy saw, what it did and what came back.

    Args:
        traj: the episode.
        episode: its index in the run (names the asset files).
        assets: where screens and audio go.
        screens: optional rendered screens, one per step (the screen the step's observation shows).
        imagined: optional world-model screens, one per step, shown beside the real ones.

    Returns:
        Plain-data dicts (JSON-serializable); media are relative file paths.
    """
    records = []
    for t, step in enumerate(traj.steps):
        rec: dict[str, Any] = {"step": t, "reward": float(step.reward)}
        rec.update(observation_record(step.observation, assets, episode=episode, step=t))
        rec.update(_action_record(step.action, assets, episode=episode, step=t))
        for key in STEP_INFO_KEYS:
            if key in step.info:
                rec[key] = _jsonable(step.info[key])
        if screens is not None and t < len(screens) and "screen" not in rec:
            rec["screen"] = assets.screen(screens[t], episode=episode, step=t)
        if imagined is not None and t < len(imagined) and imagined[t] is not None:
            rec["imagined_screen"] = assets.screen(imagined[t], episode=episode, step=t, tag="_wm")
        records.append(rec)
    return records


def episode_summary(i: int, traj: Trajectory) -> dict[str, Any]:
    """An episode's record without its steps: index, seed, task id, success, return, counts."""
    return {
        "episode": i,
        "seed": traj.seed,
        "task_id": traj.task_id,
        "success": traj.success,
        "return": traj.total_reward,
        "steps": len(traj.steps),
        "invalid_actions": sum(bool(s.info.get(K.INVALID_ACTION)) for s in traj.steps),
        "truncated": traj.truncated,
    }


def write_episodes(jsonl: Path, trajectories: Sequence[Trajectory], *, env_id: str) -> Path:
    """Write ``trajectories`` as a run `papergym view` reads: one episode record per line with its step
    records (``trace``; observations' screens and audio as files in ``RUN.assets/``).

    For evaluations that play episodes without a per-step hook (the trainers' batched sampler): screens
    are saved where the observation holds them (``screen="image"``), not drawn from the env.
    """
    jsonl = Path(jsonl)
    jsonl.parent.mkdir(parents=True, exist_ok=True)
    assets = AssetWriter(jsonl)
    with jsonl.open("w", encoding="utf-8") as f:
        for i, traj in enumerate(trajectories):
            record = {**episode_summary(i, traj), "env": env_id}
            record["trace"] = step_records(traj, episode=i, assets=assets)
            f.write(json.dumps(record) + "\n")
    return jsonl
