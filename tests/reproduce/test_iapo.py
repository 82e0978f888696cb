"""``papergym reproduce iapo``: arms that differ only in the advantage hook, the summary's reading, the smoke
run end to end and ``--model DIR``."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.cli import main as cli
from papergym.core.trajectory import Step, Trajectory
from papergym.reproduce import driver, iapo, iapo_menu
from papergym.reproduce.evaluation import TaskSamples, tool_calls
from tests.reproduce.model_dir import run_on_a_model_dir


def _args(tmp_path: Path, **overrides) -> iapo.Args:
    args = driver.resolve_args(iapo, iapo.Args(smoke=True, out=str(tmp_path)), "iapo")
    return dataclasses.replace(args, **overrides)


def test_arms_differ_only_in_the_advantage_hook(tmp_path: Path) -> None:
    args = _args(tmp_path, steps=12, eval_every=4, noise=0.3)
    configs = iapo.arm_configs(args, "BASE", seed=2, domain="telecom")
    driver.check_arms(configs, iapo.REFERENCE, iapo.MECHANISM)
    grpo_arm, flat, noisy = configs["grpo"], configs["iapo"], configs["iapo_noisy"]
    assert grpo_arm.advantage_hook is None and grpo_arm.advantage_hook_kw == []
    assert flat.advantage_hook == noisy.advantage_hook == "influence" and flat.advantage_hook_kw == []
    assert noisy.advantage_hook_kw == ["noise=0.3"]
    for config in configs.values():
        assert config.model == "BASE" and config.seed == 2 and config.steps == 12
        assert config.env == "papergym/ServiceAgent-v0" and config.checkpoint_every == 4
        assert config.env_kw == ["domain=telecom", "prompt=compact", f"max_steps={args.max_turns}"]
    assert iapo.checkpoints(flat) == {
        4: str(Path(flat.out) / "checkpoints" / "step_4"),
        8: str(Path(flat.out) / "checkpoints" / "step_8"),
        12: str(Path(flat.out) / "final"),
    }


@pytest.mark.parametrize("change", [{"lr": 3e-4}, {"group_size": 8}, {"advantage_hook_kw": ["clip=0.5"]}])
def test_check_arms_catches_a_change_beyond_the_hook(tmp_path: Path, change) -> None:
    configs = iapo.arm_configs(_args(tmp_path), "BASE", seed=0, domain="telecom")
    configs["iapo"] = dataclasses.replace(configs["iapo"], **change)
    with pytest.raises(AssertionError, match="differs from"):
        driver.check_arms(configs, iapo.REFERENCE, iapo.MECHANISM)


def test_tool_calls_are_counted_per_episode() -> None:
    steps = [
        Step("", "a", 0.0, {"tool_calls": [{"name": "x", "arguments": {}, "ok": True}]}),
        Step("", "b", 0.0, {}),
        Step("", "c", 0.0, {"tool_calls": [{"name": "y", "arguments": {}, "ok": False}]}),
    ]
    assert tool_calls(Trajectory("t", 0, steps)) == (2, 1)


def _samples(correct: list[int], calls: tuple[int, int] = (4, 3)) -> list[TaskSamples]:
    return [TaskSamples(j, "telecom", 2, c, *calls) for j, c in enumerate(correct)]


def test_summary_reads_the_gap_and_function_calls_from_the_intervals(tmp_path: Path) -> None:
    low, high = [0, 0, 1, 0, 0, 0, 1, 0] * 2, [2, 1, 2, 2, 1, 2, 2, 2] * 2
    points = {
        "grpo": {0: [_samples(low)] * 3, 4: [_samples(low)] * 3},
        "iapo": {0: [_samples(low)] * 3, 4: [_samples(high, (4, 1))] * 3},
        "iapo_noisy": {0: [_samples(low)] * 3, 4: [_samples(low)] * 3},
    }
    curves = {"telecom/grpo": {0: [{"step": 0.0, "nonzero_variance_share": 0.5}]}}
    summary = iapo.summarise(_args(tmp_path), {"telecom": points}, curves)
    d = summary["domains"]["telecom"]
    assert d["final_step"] == 4
    assert d["gap_vs_grpo"]["iapo"]["direction"] == "matches"
    assert d["gap_vs_grpo"]["iapo_noisy"]["direction"] == "inconclusive"
    assert d["function_calls"]["grpo"].mean == pytest.approx(0.75)
    assert d["function_calls"]["iapo"].mean == pytest.approx(0.25)
    assert d["calls_per_episode"]["grpo"] == pytest.approx(2.0)
    assert d["varied_groups"] == {"grpo": 0.5, "iapo": 0.0, "iapo_noisy": 0.0}
    assert d["gain_vs_base"]["grpo"].mean == 0.0 and d["gain_vs_base"]["iapo"].low > 0  # paired with the base
    text = iapo.section(summary)
    assert "**matches**" in text and "lower with IAPO" in text and "21.74" in text
    assert "| gain over the base |" in text and "grpo 0.000 [0.000, 0.000] (not apart from it)" in text
    assert text.count("(above the base)") == 1
    del d["gain_vs_base"]  # a summary from before the field renders without it
    assert "| — |" in iapo.section(summary) and "above the base" not in iapo.section(summary)


def test_smoke_run_writes_results_curve_table_and_readme_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n\nkept as is\n")
    out = tmp_path / "run"
    assert cli(["reproduce", "iapo", "--smoke", "--out", str(out), "--write", str(readme)]) == 0
    record = json.loads((out / "results.json").read_text())
    assert record["provenance"]["args"]["smoke"] is True
    assert set(record["curves"]) == {f"telecom/{arm}" for arm in iapo.ARMS}
    assert set(record["curves"]["telecom/iapo"]) == {"0", "1"}  # per-seed raw curves
    domain = record["summary"]["domains"]["telecom"]
    assert set(domain["curve"]["grpo"]) == {"0", "1", "2"}  # the base, a checkpoint and the final model
    assert set(domain["gap_vs_grpo"]) == {"iapo", "iapo_noisy"}
    assert (out / "curve_telecom.png").stat().st_size > 0
    text = readme.read_text()
    assert text.startswith("# benchmarks\n\nkept as is\n")
    assert "<!-- reproduce:iapo:begin -->" in text and "| arm | held-out success, step 2 |" in text
    # the setting paragraph states the run's budget, with the smoke action budget (not a domain default)
    assert "Run: `ServiceAgent-v0`" in text and "action budget in tokens: telecom 8." in text
    assert "2 seeds × 2 GRPO steps × 1 tasks × 2 rollouts" in text
    table = (out / "table.md").read_text()
    (out / "table.md").unlink()
    assert cli(["reproduce", "iapo", "--render", str(out / "results.json")]) == 0
    assert (out / "table.md").read_text() == table
    # a results.json from before the summary carried its setting renders it from the provenance args
    del record["summary"]["setting"]
    (out / "results.json").write_text(json.dumps(record))
    (out / "table.md").unlink()
    assert cli(["reproduce", "iapo", "--render", str(out / "results.json")]) == 0
    assert (out / "table.md").read_text() == table


@pytest.mark.slow  # the same warm_base -> GRPO path as ttpo's --model test, which runs in `make test`
def test_model_dir_is_used_as_the_base_without_sft(tmp_path: Path, monkeypatch) -> None:
    out, record, _ = run_on_a_model_dir("iapo", tmp_path, monkeypatch)
    assert record["summary"]["domains"]["telecom"]["final_step"] == 2
    assert (out / "traces" / f"model_s{iapo.EVAL_SEED}.jsonl").exists()  # the base evaluated is the dir


def test_action_budget_is_the_domains_default_unless_set() -> None:
    assert iapo.action_budget(0, "telecom") == iapo.ACTION_TOKENS["telecom"]
    assert iapo.action_budget(96, "airline") == 96
    with pytest.raises(ValueError, match="--max-new-tokens"):
        iapo.action_budget(0, "banking")


def test_resume_extends_a_finished_run_to_the_unbroken_runs_results(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    iapo.run(_args(tmp_path / "whole", steps=3, seeds=1))  # one seed: resuming is per (seed, arm) run
    iapo.run(_args(tmp_path / "extended", steps=2, seeds=1))
    with caplog.at_level("INFO", logger="papergym"):
        iapo.run(_args(tmp_path / "extended", steps=3, seeds=1, resume=True))
    messages = [r.getMessage() for r in caplog.records]
    resumed = [m for m in messages if m.startswith("resuming")]
    assert len(resumed) == len(iapo.ARMS) and all(m.endswith("from step 2") for m in resumed)
    # the checkpoint the first run scored (step 1) is not scored again
    reused = [m for m in messages if m.startswith("reusing the held-out scores")]
    assert sum("step_1 " in m for m in reused) == len(iapo.ARMS)
    assert not any("step_2 " in m for m in reused)  # scored as the first run's final, not at this path
    whole, extended = (json.loads((tmp_path / n / "results.json").read_text()) for n in ("whole", "extended"))
    assert set(whole["summary"]["domains"]["telecom"]["curve"]["iapo"]) == {"0", "1", "2", "3"}
    assert extended["summary"] == whole["summary"]
    assert extended["curves"] == whole["curves"]


@pytest.mark.parametrize("domain", ["retail", "telecom"])
def test_menu_arms_differ_only_in_the_advantage_hook(tmp_path: Path, domain: str) -> None:
    configs = iapo_menu.arm_configs(_args(tmp_path, menu_steps=7, noise=0.3, domains=[domain]), seed=1)
    driver.check_arms(configs, iapo_menu.REFERENCE, iapo_menu.MECHANISM)
    assert configs["grpo"].advantage_hook is None and configs["iapo"].advantage_hook == "influence"
    assert configs["iapo_noisy"].advantage_hook_kw == ["noise=0.3"] and not configs["iapo"].advantage_hook_kw
    assert configs["iapo_shuffled"].advantage_hook_kw == ["shuffle=true"]
    assert {f"domain={domain}", "obs_mode=chat", "format_penalty=0"} <= set(configs["grpo"].env_kw)
    assert {c.menu for c in configs.values()} == {domain}
    for change in ({"lr": 0.3}, {"demos": 3}, {"group_size": 16}):
        changed = {**configs, "iapo": dataclasses.replace(configs["iapo"], **change)}
        with pytest.raises(AssertionError, match="differs from"):
            driver.check_arms(changed, iapo_menu.REFERENCE, iapo_menu.MECHANISM)


@pytest.mark.parametrize("domains", [["airline"], ["retail", "telecom"]])
def test_menu_runs_one_domain_with_a_menu(tmp_path: Path, domains: list[str]) -> None:
    with pytest.raises(ValueError, match="one domain with a menu"):
        iapo_menu.arm_configs(_args(tmp_path, domains=domains), seed=0)


def test_menu_measures_count_calls_from_structured_flags() -> None:
    infos = [{"tool_calls": [{"name": "a", "ok": True}]}, {"tool_calls": [{"name": "b", "ok": False}]}, {}]
    traj = Trajectory("t", 0, [Step("", "x", 0.0, info) for info in infos], success=True)
    assert iapo_menu.episode_measures(traj) == {"success": 1.0, "calls": 2.0, "calls_ok": 1.0}


def test_menu_smoke_run_writes_its_own_section(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# benchmarks\n")
    out = tmp_path / "menu"
    argv = ["reproduce", "iapo", "--smoke", "--policy", "menu", "--out", str(out), "--write", str(readme)]
    assert cli(argv) == 0
    record = json.loads((out / "results.json").read_text())
    summary = record["summary"]
    assert set(record["curves"]) == set(iapo_menu.ARMS) and summary["setting"]["policy"] == "menu"
    assert set(summary["success"]) == {"base", *iapo_menu.ARMS} and set(summary["gaps"]) == {
        "iapo",
        "iapo_noisy",
        "iapo_shuffled",
    }
    assert (out / "training_success.png").stat().st_size > 0
    text = readme.read_text()
    assert (
        "<!-- reproduce:iapo-menu-telecom:begin -->" in text and "| iapo − grpo, held-out success |" in text
    )
    assert "| paper (telecom, 8B) |" in text and "+18.19 (telecom pass^1)" in text
    assert "| iapo_shuffled − grpo, held-out success |" in text
    with pytest.raises(SystemExit, match="written by its run"):
        cli(["reproduce", "iapo", "--render", str(out / "results.json")])
    with pytest.raises(ValueError, match="takes no --model"):
        iapo.run(_args(tmp_path, policy="menu", model="some/dir"))
    with pytest.raises(ValueError, match="'lm' or 'menu'"):
        iapo.run(_args(tmp_path, policy="hopper"))
