from __future__ import annotations

import json
import wave
from pathlib import Path

import gymnasium as gym
import numpy as np

from papergym.cli import main
from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory
from papergym.viewer import AssetWriter, assets_dir, step_records


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_gui_eval_writes_screens_beside_the_jsonl(gui_run: Path) -> None:
    records = _records(gui_run)
    trace = records[0]["trace"]
    assert len(trace) == records[0]["steps"] > 0
    assert all(s["screen"] == f"run.assets/ep0000_step{s['step']:02d}.png" for s in trace)
    png = (gui_run.parent / trace[0]["screen"]).read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Instruction:" in trace[0]["text"] and trace[0]["action"].startswith("Thought")
    assert "data:" not in gui_run.read_text()  # the JSONL holds references, not image bytes


def test_service_eval_records_tool_calls_results_and_checks(tmp_path: Path) -> None:
    out = tmp_path / "svc.jsonl"
    assert main(["eval", "papergym/ServiceAgent-v0", "--episodes", "1", "--out", str(out)]) == 0
    trace = _records(out)[0]["trace"]
    assert any(s.get(K.TOOL_CALLS) for s in trace)
    assert any(s.get(K.TOOL_RESULTS) for s in trace)
    assert any(K.CHECKS in s for s in trace) and any(s.get(K.REWARD_COMPONENTS) for s in trace)
    assert not assets_dir(out).exists()  # a text env writes no assets


def test_no_steps_flag_keeps_summaries_only(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    assert main(["eval", "papergym/Reasoning-v0", "--episodes", "2", "--no-steps", "--out", str(out)]) == 0
    assert all("trace" not in r for r in _records(out))


def test_audio_observation_and_spoken_action_become_wav_files(tmp_path: Path) -> None:
    wave_in = np.sin(np.linspace(0, 200, 8000)).astype(np.float32)
    traj = Trajectory(
        task_id="t",
        seed=0,
        steps=[Step({"audio": wave_in, "text": "hi"}, {"text": "ok", "audio": wave_in[:4000]}, 1.0, {})],
        success=True,
    )
    (rec,) = step_records(traj, episode=3, assets=AssetWriter(tmp_path / "a.jsonl"))
    assert rec["text"] == "hi" and rec["action"] == "ok"
    assert rec["audio"] == "a.assets/ep0003_step00.wav"
    with wave.open(str(tmp_path / rec["audio"])) as w:
        assert (w.getframerate(), w.getnframes()) == (16_000, 8000)
    with wave.open(str(tmp_path / rec["action_audio"])) as w:
        assert w.getnframes() == 4000


def test_unserializable_info_values_are_kept_as_text(tmp_path: Path) -> None:
    info = {K.PARSED_ACTION: {"obj": object()}, "unrelated": 1}
    traj = Trajectory(task_id="t", seed=0, steps=[Step("obs", "act", 0.0, info)], success=False)
    (rec,) = step_records(traj, episode=0, assets=AssetWriter(tmp_path / "a.jsonl"))
    assert isinstance(rec[K.PARSED_ACTION], str) and "unrelated" not in rec
    json.dumps(rec)


def test_chat_observation_records_the_newest_message(tmp_path: Path) -> None:
    env = gym.make("papergym/Reasoning-v0", obs_mode="chat")
    obs, _ = env.reset(seed=0)
    traj = Trajectory(task_id="t", seed=0, steps=[Step(obs, "a", 0.0, {})], success=False)
    (rec,) = step_records(traj, episode=0, assets=AssetWriter(tmp_path / "a.jsonl"))
    assert rec["text"] == obs[-1]["content"]
