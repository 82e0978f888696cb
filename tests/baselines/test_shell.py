"""The trainer shell: every trainer's ``Args`` inherits the shared run flags with one set of defaults, every
``papergym train ALGO -h`` works, and `Run.checkpoint` saves on its period and prunes with ``keep_last``."""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest

from papergym.baselines.run import PolicyRunArgs, Run, RunArgs, RunDirArgs
from papergym.cli import TRAINERS, main

# merge is a one-shot tool (no steps, nothing to resume, checkpoint or plot), not a run
OUTSIDE_SHELL = {"merge"}
RUNS = sorted(a for a in TRAINERS if a not in OUTSIDE_SHELL)
OVERRIDES = {"env", "out"}  # each trainer's own env and run directory
PAPER_OVERRIDES = {"es": {"seed", "eval_tasks"}}  # Qiu et al.'s INITIAL_SEED 33; ES's held-out probe


def _args(algo: str) -> type:
    return importlib.import_module(TRAINERS[algo].partition(":")[0]).Args


@pytest.mark.parametrize("algo", RUNS)
def test_every_trainer_shares_the_run_flags_and_their_defaults(algo: str) -> None:
    args = _args(algo)
    assert issubclass(args, RunDirArgs)
    base = next(b for b in (PolicyRunArgs, RunArgs, RunDirArgs) if issubclass(args, b))
    defaults = base()
    mine = args()
    allowed = OVERRIDES | PAPER_OVERRIDES.get(algo, set())
    differs = {f.name for f in dataclasses.fields(base) if getattr(mine, f.name) != getattr(defaults, f.name)}
    assert differs <= allowed, f"{algo} changes the shared defaults of {sorted(differs - allowed)}"


def test_trainers_of_a_model_take_the_model_flags() -> None:
    # jzero trains several role policies; world_model builds its own tiny LM from the transitions' texts;
    # induction trains on synthetic text, no env (nothing to evaluate on)
    outside = [a for a in RUNS if not issubclass(_args(a), PolicyRunArgs)]
    assert outside == ["induction", "jzero", "world_model"]


def test_only_a_trainer_without_an_env_lacks_the_env_flags() -> None:
    assert [a for a in RUNS if not issubclass(_args(a), RunArgs)] == ["induction"]


@pytest.mark.parametrize("algo", sorted(TRAINERS))
def test_train_help_lists_the_shared_flags(algo: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["train", algo, "-h"])
    assert exit_.value.code == 0
    printed = capsys.readouterr().out
    assert "--out" in printed
    if algo not in OUTSIDE_SHELL:
        assert all(
            flag in printed for flag in ("--resume", "--checkpoint-every", "--tensorboard", "--threads")
        )


def test_checkpoint_saves_on_its_period_and_keeps_the_newest(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    run = Run(tmp_path, total_steps=6, progress=False, checkpoint_every=2, keep_last=1)
    saved = [run.checkpoint(done, extra={"x": done}) for done in range(1, 7)]
    assert [p.name if p else None for p in saved] == [None, "step_2", None, "step_4", None, "step_6"]
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step_6"]
    again = Run(tmp_path, total_steps=6, resume=True, progress=False)
    assert again.start_step == 6 and again.resumed_state is not None and again.resumed_state["x"] == 6
