"""``papergym reproduce speechgym``: arms that differ only in the process reward, the smoke run end to end
(the process arm trains on outcome + process, the reference on the outcome alone), and ``--model DIR``."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.cli import main as cli
from papergym.reproduce import driver, speechgym, speechgym_menu
from tests.reproduce.model_dir import run_on_a_model_dir

SPEECH = all(importlib.util.find_spec(m) for m in ("piper", "faster_whisper"))
"""The ``audio`` extra (Piper + faster-whisper): without it the smoke run's transfer uses the text channel."""


def _args(tmp_path: Path, **overrides) -> speechgym.Args:
    args = driver.resolve_args(speechgym, speechgym.Args(smoke=True, out=str(tmp_path)), "speechgym")
    return dataclasses.replace(args, **overrides)


def test_arms_differ_only_in_the_process_reward_wrapper(tmp_path: Path) -> None:
    configs = speechgym.arm_configs(_args(tmp_path, steps=5), "BASE", seed=2)
    driver.check_arms(configs, speechgym.REFERENCE, speechgym.MECHANISM)
    assert configs["outcome"].env_wrapper is None and configs["process"].env_wrapper == "process_reward"
    assert {c.model for c in configs.values()} == {"BASE"} and {c.steps for c in configs.values()} == {5}
    assert {"channel=simulated", "format_penalty=0"} <= set(configs["outcome"].env_kw)
    for change in ({"lr": 3e-4}, {"env_kw": ["channel=text"]}, {"group_size": 4}):
        configs["process"] = dataclasses.replace(configs["process"], **change)
        with pytest.raises(AssertionError, match="differs from"):
            driver.check_arms(configs, speechgym.REFERENCE, speechgym.MECHANISM)
        configs = speechgym.arm_configs(_args(tmp_path, steps=5), "BASE", seed=2)
    configs["process"] = dataclasses.replace(configs["process"], env_wrapper=None)
    with pytest.raises(AssertionError, match="differs from"):  # the mechanism left out
        driver.check_arms(configs, speechgym.REFERENCE, speechgym.MECHANISM)


def test_smoke_run_trains_each_arm_on_its_reward_and_writes_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not SPEECH:  # the same code path on the text channel
        monkeypatch.setitem(speechgym.SMOKE, "transfer_channels", ["text"])
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "speechgym", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["smoke"] is True
    assert record["provenance"]["args"]["sft_demonstrator"].endswith(":HearingOracle")
    assert set(record["curves"]) == set(speechgym.TRAINED_ARMS)
    for arm, trained in (("outcome", "outcome_variance_share"), ("process", "process_variance_share")):
        assert set(record["curves"][arm]) == {"0", "1"}  # per-seed raw curves
        for row in (r for rows in record["curves"][arm].values() for r in rows):
            # each arm's logged share is that of the reward it trained on, scored from its episodes
            assert row["nonzero_variance_share"] == row[trained]
            assert row["process_variance_share"] >= row["outcome_variance_share"]
            assert {"train_unauthorized_writes", "train_dead_loops", "train_success"} <= set(row)
    summary = record["summary"]
    assert set(summary["held_out"]) == set(speechgym.ARMS)
    assert set(summary["differences"]) == {"success", "unauthorized_writes", "dead_loops"}
    channels = ["transcript"] if SPEECH else ["text"]
    assert list(summary["transfer"]) == channels
    assert set(summary["transfer"][channels[0]]) == {"base", "outcome, seed 0", "process, seed 0"}
    assert (out / "variance_share.png").stat().st_size > 0
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n")
    assert "<!-- reproduce:speechgym:begin -->" in text and "| arm | trained reward |" in text
    table = (out / "table.md").read_text()
    (out / "table.md").unlink()
    assert cli(["reproduce", "speechgym", "--render", str(out / "results.json")]) == 0
    assert (out / "table.md").read_text() == table


@pytest.mark.slow  # the same warm_base -> GRPO path as ttpo's --model test, which runs in `make test`
def test_model_dir_is_the_base_without_sft(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(speechgym.SMOKE, "transfer_channels", ["text"])  # speech is the smoke test's part
    out, record, _ = run_on_a_model_dir("speechgym", tmp_path, monkeypatch)
    assert json.loads((out / "seed0" / "process" / "metrics.jsonl").read_text().splitlines()[0])["step"] == 0
    assert record["summary"]["held_out"]["base"]["success"]["mean"] >= 0.0


def test_menu_arms_differ_only_in_the_process_reward_wrapper(tmp_path: Path) -> None:
    configs = speechgym_menu.arm_configs(_args(tmp_path, menu_steps=5), seed=2)
    driver.check_arms(configs, speechgym_menu.REFERENCE, speechgym_menu.MECHANISM)
    assert configs["outcome"].wrapper is None and configs["process"].wrapper == "process_reward"
    assert configs["process_capped"].wrapper_kw == ["max_calls=4"] and not configs["process"].wrapper_kw
    assert "obs_mode=chat" in configs["outcome"].env_kw and {c.steps for c in configs.values()} == {5}
    for change in ({"lr": 0.3}, {"demos": 7}, {"env_kw": ["channel=text", "obs_mode=chat"]}):
        changed = {**configs, "process": dataclasses.replace(configs["process"], **change)}
        with pytest.raises(AssertionError, match="differs from"):
            driver.check_arms(changed, speechgym_menu.REFERENCE, speechgym_menu.MECHANISM)


def test_menu_smoke_run_writes_its_own_section(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(speechgym.SMOKE, "transfer_channels", ["text", "audio"])  # real speech: the LM test's
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n")
    out = tmp_path / "menu"
    argv = [
        "reproduce",
        "speechgym",
        "--smoke",
        "--policy",
        "menu",
        "--out",
        str(out),
        "--write",
        str(readme),
    ]
    assert cli(argv) == 0
    record = json.loads((out / "results.json").read_text())
    summary = record["summary"]
    assert summary["setting"]["policy"] == "menu" and summary["setting"]["skipped_channels"] == ["audio"]
    assert list(summary["transfer"]) == ["text"]  # the menu reads text: no audio channel
    assert set(summary["transfer"]["text"]) == {"base", *(f"{arm}, seed 0" for arm in speechgym_menu.ARMS)}
    assert (
        set(summary["held_out"]) == {"base", *speechgym_menu.ARMS}
        and len(summary["demonstrator"]["success"]) == 2
    )
    assert set(record["curves"]) == {"outcome", "process", "process_capped"}
    for arm, trained in (("outcome", "outcome_variance_share"), ("process", "process_variance_share")):
        for row in (r for rows in record["curves"][arm].values() for r in rows):
            assert row["nonzero_variance_share"] == row[trained]  # the return's share: the reward trained on
    assert set(summary["ablations"]) == {"process_capped"}
    text = readme.read_text()
    assert "<!-- reproduce:speechgym-menu:begin -->" in text and "--policy menu" in text
    assert "not on audio" in text and "| process_capped |" in text and "Ablation `process_capped`" in text
    with pytest.raises(SystemExit, match="written by its run"):
        cli(["reproduce", "speechgym", "--render", str(out / "results.json")])


def test_menu_refuses_a_model_and_unknown_policies_are_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="takes no --model"):
        speechgym.run(_args(tmp_path, policy="menu", model="some/dir"))
    with pytest.raises(ValueError, match="'lm' or 'menu'"):
        speechgym.run(_args(tmp_path, policy="hopper"))


def test_menu_run_without_transfer(tmp_path: Path) -> None:
    summary = speechgym.run(_args(tmp_path / "run", policy="menu", transfer_seeds=0, seeds=1))
    assert summary["transfer"] == {} and summary["held_out"]["outcome"]["success"].mean >= 0.0
