"""`cached_scores`: a checkpoint's held-out scores are reused only for the same path, weights and settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.reproduce.evaluation import TaskSamples, cached_scores


def _checkpoint(path: Path, weights: bytes) -> str:
    path.mkdir(parents=True, exist_ok=True)
    (path / "model.safetensors").write_bytes(weights)
    return str(path)


def test_scores_are_reused_only_for_the_same_checkpoint_weights_and_settings(tmp_path: Path) -> None:
    cache, calls = tmp_path / "scores.jsonl", []

    def evaluate() -> list[TaskSamples]:
        calls.append(1)
        return [TaskSamples(seed=len(calls), family="all", n=2, correct=1, calls=3, calls_ok=2)]

    step = _checkpoint(tmp_path / "step_1", b"weights a")
    first = cached_scores(cache, step, {"tasks": 4}, evaluate)
    assert cached_scores(cache, step, {"tasks": 4}, evaluate) == first and len(calls) == 1
    assert cached_scores(cache, step, {"tasks": 8}, evaluate) != first  # other settings: scored again
    other = _checkpoint(tmp_path / "step_2", b"weights a")
    cached_scores(cache, other, {"tasks": 4}, evaluate)  # same weights, another checkpoint: scored again
    _checkpoint(tmp_path / "step_1", b"weights b")  # a fresh run overwrote the checkpoint
    assert cached_scores(cache, step, {"tasks": 4}, evaluate)[0].seed == 4
    assert len(calls) == 4 and len(cache.read_text().splitlines()) == 4


def test_a_directory_without_weights_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="safetensors"):
        cached_scores(tmp_path / "scores.jsonl", str(tmp_path), {}, list)
