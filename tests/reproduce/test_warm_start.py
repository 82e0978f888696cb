"""The reproductions' shared warm start: induction pre-training before the SFT, cached and reused."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("transformers")

from papergym.reproduce import driver

SETTINGS = {
    "env": "papergym/Reasoning-v0",
    "env_kw": ["domain=arith", "difficulty=1"],
    "episodes": 4,
    "steps": 1,
    "batch_size": 2,
    "lr": 1e-3,
    "seed": 0,
    "device": "cpu",
    "threads": 1,
}


def test_induction_steps_pretrain_before_the_sft_and_both_are_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from papergym.baselines import induction, sft

    started: list[str] = []
    real_sft = sft.main
    monkeypatch.setattr(sft, "main", lambda args, **kw: (started.append(args.model), real_sft(args, **kw))[1])
    plain = driver.sft_warm_start(tmp_path, **SETTINGS)
    primed = driver.sft_warm_start(tmp_path, **SETTINGS, induction_steps=2)
    assert plain != primed and (plain / "config.json").exists() and (primed / "config.json").exists()
    (pretrained,) = tmp_path.glob("induction-2-*/final")
    assert started == ["tiny", str(pretrained)]  # the second SFT starts from the pre-trained model

    def no_training(*args: object, **kwargs: object) -> None:
        raise AssertionError("a cached warm start must not train again")

    monkeypatch.setattr(induction, "main", no_training)
    monkeypatch.setattr(sft, "main", no_training)
    assert driver.sft_warm_start(tmp_path, **SETTINGS, induction_steps=2) == primed


def test_a_model_dir_is_never_induction_pretrained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[int] = []
    monkeypatch.setattr(driver, "sft_warm_start", lambda *a, **kw: seen.append(kw["induction_steps"]) or "x")
    args = driver.WarmStartArgs(out=str(tmp_path / "run"), induction_steps=5)
    assert driver.warm_base(args) == "x" and seen == [5]
    assert driver.warm_base(args, model=str(tmp_path)) == "x" and seen == [5, 0]
    assert driver.warm_base(driver.WarmStartArgs(out=str(tmp_path), model=str(tmp_path))) == str(tmp_path)
