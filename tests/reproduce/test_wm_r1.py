"""``papergym reproduce wm-r1``: arms that differ only in the mechanism, world-model arms that never touch
the real simulator while training, the smoke run end to end and ``--model DIR``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.baselines import grpo
from papergym.cli import main as cli
from papergym.core import info_keys as K
from papergym.envs.mobile_gui.phone import Phone
from papergym.envs.mobile_gui.world_model_env import imagine
from papergym.reproduce import driver, wm_r1
from tests.reproduce.model_dir import run_on_a_model_dir


def _args(tmp_path: Path, **overrides) -> wm_r1.Args:
    args = driver.resolve_args(wm_r1, wm_r1.Args(smoke=True, out=str(tmp_path / "run")), "wm-r1")
    return dataclasses.replace(args, **overrides)


def test_arms_differ_only_in_the_mechanism(tmp_path: Path) -> None:
    args = _args(tmp_path)
    configs = wm_r1.arm_configs(args, "BASE", seed=2)
    driver.check_arms(configs, wm_r1.REFERENCE, wm_r1.MECHANISM)
    real, wm, imag = configs["real"], configs["wm"], configs["wm_imagine"]
    assert real.model == wm.model == imag.model == "BASE" and real.seed == wm.seed == imag.seed == 2
    assert real.env == "papergym/MobileGUI-v0" and wm.env == imag.env == "papergym/WorldModelGUI-v0"
    assert "n_wm_max=0" in wm.env_kw and "n_wm_max=0" not in imag.env_kw
    assert real.group_reward is None and wm.group_reward is None and imag.group_reward == "wm_r1"
    swept = wm_r1.arm_configs(args, "BASE", seed=2, error=0.3)
    assert "wm_error=0.3" in swept["wm"].env_kw and swept["wm"].out != wm.out
    for change in ({"lr": 1e-3}, {"max_turns": 2}, {"group_reward": "wm_r1"}):
        broken = {**configs, "wm": dataclasses.replace(wm, **change)}
        with pytest.raises(AssertionError, match="differs from"):
            driver.check_arms(broken, wm_r1.REFERENCE, wm_r1.MECHANISM)


def test_world_model_arms_never_call_the_real_simulator_while_training(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _args(tmp_path, wm_episodes=6, wm_eval_episodes=1, max_turns=5)
    wm_r1.build_world_model(args)
    calls = []
    real_act = Phone.act
    monkeypatch.setattr(Phone, "act", lambda phone, a: calls.append(a) or real_act(phone, a))

    def oracle(member: int, env, observation) -> str:  # acts on the screens the env shows
        action = env.unwrapped.oracle_action()
        wm = getattr(env.unwrapped, "wm", None)
        if member % 2 and wm is not None and wm.n_wm == 0 and "finished(" not in action:
            return imagine(action)  # an imagined turn, where the arm offers call_wm
        return action

    counted = {}
    for arm, config in wm_r1.arm_configs(args, "tiny", seed=0).items():
        config = dataclasses.replace(config, prompts_per_step=2, group_size=2, max_new_tokens=64)
        seen: list = []
        calls.clear()
        grpo.main(config, script=oracle, on_step=lambda step, m, episodes, seen=seen: seen.extend(episodes))
        steps = [s for e in seen for s in e.trajectory.steps]
        counted[arm] = (len(calls), sum(int(e.trajectory.final_info[K.REAL_STEPS]) for e in seen))
        if arm == "wm_imagine":
            assert any(s.info.get(K.IMAGINED) for s in steps)  # imagination was exercised
    assert counted["wm"] == counted["wm_imagine"] == (0, 0)
    assert counted["real"][0] > 0 and counted["real"][0] == counted["real"][1]  # the control counts


def test_smoke_run_writes_results_table_png_and_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "wm-r1", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["smoke"] is True
    assert set(record["curves"]) == {*wm_r1.TRAINED_ARMS, "wm@0.3", "wm_imagine@0.3"}
    for arm in ("wm", "wm_imagine", "wm@0.3", "wm_imagine@0.3"):
        assert all(row["real_steps"] == 0 for rows in record["curves"][arm].values() for row in rows)
    summary = record["summary"]
    assert set(summary["success"]) == set(wm_r1.ARMS)
    assert set(summary["success"]["real"]) == {"id", "ood"}
    assert summary["world_model"]["accuracy"]["ood"]["n"] > 0 and summary["sweep"]["0.3"]["wm"]
    assert (out / "wm_r1.png").stat().st_size > 0
    assert (out / "world_model" / "table.json").exists()
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n") and "<!-- reproduce:wm-r1:begin -->" in text
    assert "| arm | ID success | OOD success |" in text and "39.8 (WM-R1)" in text
    table = (out / "table.md").read_text()
    (out / "table.md").unlink()
    assert cli(["reproduce", "wm-r1", "--render", str(out / "results.json")]) == 0
    assert (out / "table.md").read_text() == table


def test_model_dir_is_the_base_without_sft(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out, record, model = run_on_a_model_dir("wm-r1", tmp_path, monkeypatch)
    assert record["summary"]["settings"]["model"] == str(model)
    first = json.loads((out / "seed0" / "wm_imagine" / "metrics.jsonl").read_text().splitlines()[0])
    assert first["step"] == 0


def test_gain_ratio_is_na_when_the_real_arm_did_not_gain() -> None:
    assert wm_r1.gain_ratio(0.16, 0.087) == "1.84"
    # two negative gains would otherwise read as "3.33": wm_imagine lost more than real did
    assert wm_r1.gain_ratio(-0.042, -0.0126).startswith("n/a")
    assert wm_r1.gain_ratio(0.05, 0.0).startswith("n/a")
