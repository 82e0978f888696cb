from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import papergym
from papergym.cli import main, parse_env_kwargs, wilson_interval
from papergym.core.errors import DependencyNotInstalled

ROOT = Path(__file__).resolve().parents[1]


def test_list_names_every_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert all(env_id in out for env_id in papergym.ENV_IDS)


def test_eval_writes_one_jsonl_line_per_episode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "ep.jsonl"
    args = ["eval", "papergym/Reasoning-v0", "--policy", "oracle", "--episodes", "7", "--seed", "3"]
    assert main([*args, "--kw", "domain=code", "--out", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in records] == list(range(3, 10))
    assert all(r["success"] and r["task_id"].startswith("code/") for r in records)
    assert "success 1.000 [0.646, 1.000]" in capsys.readouterr().out


def test_eval_random_policy_mostly_fails(tmp_path: Path) -> None:
    out = tmp_path / "ep.jsonl"
    assert (
        main(["eval", "papergym/Reasoning-v0", "--policy", "random", "--episodes", "30", "--out", str(out)])
        == 0
    )
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sum(r["success"] for r in records) < 10


def test_demo_prints_a_success_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--episodes", "6"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = [line.split("  ") for line in lines if line.startswith("papergym/")]
    rows = [[cell.strip() for cell in row if cell.strip()] for row in rows]
    assert len(rows) == sum(len(e.contract_variants()) for e in papergym.CATALOGUE)
    # the oracle column: success 1.000 with its interval, for every id and variant
    assert all(re.fullmatch(r"1\.000 \[0\.\d+, 1\.000\]", row[3]) for row in rows), rows
    # real speech and image screens run fewer episodes (their contract_budget), the rest the asked number
    episodes = {(row[0], row[1]): int(row[2]) for row in rows}
    speech = {k for k in episodes if k[0] == "papergym/VoiceService-v0" and "simulated" not in k[1]}
    images = {k for k in episodes if "screen=image" in k[1]}
    assert speech and images and all(episodes[k] == 5 for k in speech | images)
    assert all(n == 6 for k, n in episodes.items() if k not in speech | images)


def test_demo_reports_an_env_whose_extra_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing(*args: object, **kwargs: object) -> None:
        raise DependencyNotInstalled('pip install "papergym[audio]"')

    monkeypatch.setattr(papergym, "CATALOGUE", papergym.CATALOGUE[:1])
    monkeypatch.setattr("papergym.cli._demo_episodes", missing)
    assert main(["demo", "--episodes", "2"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("papergym/")]
    assert rows and all('skipped: pip install "papergym[audio]"' in row for row in rows)


def test_play_reads_actions_from_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    answers = iter(["/oracle", "\\boxed{-1}"])
    monkeypatch.setattr("builtins.input", lambda prompt="": next(answers))
    assert main(["play", "papergym/Reasoning-v0", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "\\boxed{" in out and "episode over: success=" in out


def test_bad_cli_input_exits_with_a_message() -> None:
    with pytest.raises(SystemExit, match="key=value"):
        parse_env_kwargs(["domain"])
    with pytest.raises(SystemExit, match="unknown policy"):
        main(["eval", "papergym/Reasoning-v0", "--policy", "clever", "--episodes", "1"])
    assert parse_env_kwargs(["difficulty=2", "domain=code"]) == {"difficulty": 2, "domain": "code"}


def test_wilson_interval_bounds() -> None:
    low, high = wilson_interval(0, 20)
    assert low == 0.0 and 0.1 < high < 0.2
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_readme_lists_every_id_and_starts_with_the_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(f"`{env_id}`" in readme for env_id in papergym.ENV_IDS)
    head = readme.split("```")[1]
    assert "make demo" in head and "make test" in head
    assert not any(line.startswith(("<<<<<<< ", ">>>>>>> ")) for line in readme.splitlines())


def test_env_speed_benchmark_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import env_speed
    import gymnasium as gym

    stats = env_speed.time_env(gym.make("papergym/Reasoning-v0"), repeats=20)
    assert stats["reset_p50"] > 0 and stats["steps_per_s"] > 0
    assert sys.modules["env_speed"] is env_speed


@pytest.mark.parametrize(
    "script",
    sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if p.name != "readme_section.py"),
)
def test_every_benchmark_script_starts_as_a_script(script: str) -> None:
    """`python benchmarks/X.py --help` imports all the script imports, as `papergym bench` runs it."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT.parent,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout


def test_bench_runs_both_scripts_in_their_own_interpreter(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    calls = []
    monkeypatch.setattr(
        "papergym.cli.subprocess.run",
        lambda cmd, check: calls.append(cmd) or subprocess.CompletedProcess(cmd, 0),
    )
    assert main(["bench", "--write", str(tmp_path / "R.md"), "--repeats", "7", "--episodes", "3"]) == 0
    assert [Path(c[1]).name for c in calls] == ["env_speed.py", "scaleout.py"]
    assert all(c[0] == sys.executable and c[2:4] == ["--write", str(tmp_path / "R.md")] for c in calls)
    assert calls[0][4:] == ["--repeats", "7"] and calls[1][4:] == ["--episodes", "3"]

    monkeypatch.setattr("papergym.cli.subprocess.run", lambda cmd, check: subprocess.CompletedProcess(cmd, 3))
    with pytest.raises(SystemExit, match=r"env_speed\.py failed"):
        main(["bench"])
