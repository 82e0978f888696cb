"""``papergym reproduce NAME --smoke --model DIR`` on a small answering checkpoint, with SFT forbidden: the
check every driver's ``--model DIR`` test starts from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from papergym.cli import main as cli
from papergym.reproduce import driver


def _answering(session_dir: Path, env_id: str, steps: int) -> Path:
    """The answering checkpoint of (``env_id``, ``steps``), built once per test session (it is the same
    bytes every time: the builder is seeded) under the session's temporary directory."""
    from tests.baselines.answering import answering_checkpoint

    path = session_dir / "answering-checkpoints" / f"{env_id.replace('/', '_')}-{steps}"
    done = path.with_suffix(".built")  # written last: a build cut short is built again
    if not done.exists():
        shutil.rmtree(path, ignore_errors=True)
        answering_checkpoint(path, env_id=env_id, steps=steps)
        done.touch()
    return path


def run_on_a_model_dir(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    *,
    env_id: str = "papergym/TestTime-v0",
    answer_steps: int = 40,
) -> tuple[Path, dict[str, Any], Path]:
    """Run the reproduction ``name`` on a checkpoint fine-tuned on ``env_id`` for ``answer_steps`` steps;
    assert no warm start was trained and the record names the checkpoint. Returns the run directory, its
    results.json record and the checkpoint."""
    model = tmp_path / "model"
    shutil.copytree(_answering(tmp_path.parent, env_id, answer_steps), model)

    def no_sft(*args: object, **kwargs: object) -> None:
        raise AssertionError("--model DIR must not be SFT-warmed")

    monkeypatch.setattr(driver, "sft_warm_start", no_sft)
    out = tmp_path / "run"
    assert cli(["reproduce", name, "--smoke", "--out", str(out), "--model", str(model)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["model"] == str(model)
    assert not list(tmp_path.glob("sft-*"))  # no warm start was trained
    return out, record, model
