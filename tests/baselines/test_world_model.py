"""The learned GUI world model's trainer and loader, on a tiny budget."""

from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.envs.mobile_gui.phone import Phone

pytest.importorskip("torch")
pytest.importorskip("transformers")


def test_train_save_load_and_play_inside_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from papergym.baselines.world_model import Args, load_world_model, main

    out = tmp_path / "wm"
    args = Args(
        out=str(out),
        episodes=2,
        steps=3,
        batch_size=2,
        hidden=32,
        layers=1,
        vocab_size=512,
        eval_transitions=2,
        max_tokens=8,
        progress=False,
    )
    result = main(args)
    assert (out / "final" / "model.safetensors").exists() and result["examples"] > 0
    for layout in ("default", "heldout"):
        acc = result[f"accuracy_{layout}"]
        assert acc["n"] == 2 and 0.0 <= acc["exact"] <= 1.0 and 0.0 <= acc["line_f1"] <= 1.0
    saved = json.loads((out / "world_model.json").read_text())
    assert saved["args"]["steps"] == 3 and saved["result"]["examples"] == result["examples"]
    losses = [json.loads(line)["loss"] for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert len(losses) == 3
    acts: list[object] = []
    real_act = Phone.act
    monkeypatch.setattr(Phone, "act", lambda phone, a: acts.append(a) or real_act(phone, a))
    env = gym.make("papergym/WorldModelGUI-v0", world_model=load_world_model(out, max_tokens=8))
    env.reset(seed=0)
    *_, info = env.step("Thought: open it.\nAction: open_app(app_name='Settings')")
    assert info["real_steps"] == 0 and acts == [] and not info["invalid_action"]


def test_a_resumed_run_ends_where_an_unbroken_one_does(tmp_path: Path) -> None:
    from papergym.baselines.world_model import Args, main

    def args(out: Path, steps: int, **kw: object) -> Args:
        small = dict(episodes=2, batch_size=2, hidden=32, layers=1, vocab_size=512, progress=False)
        return Args(out=str(out), steps=steps, checkpoint_every=2, **small, **kw)  # type: ignore[arg-type]

    full = main(args(tmp_path / "full", 4))
    main(args(tmp_path / "cut", 2))  # stopped after 2 steps (its step-2 checkpoint)
    resumed = main(args(tmp_path / "cut", 4, resume=True))
    assert resumed["loss"] == pytest.approx(full["loss"], rel=1e-5)
    log = (tmp_path / "cut" / "metrics.jsonl").read_text().splitlines()
    steps = [json.loads(line)["step"] for line in log]
    assert steps == [0, 1, 2, 3]
