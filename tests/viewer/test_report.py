from __future__ import annotations

import json
from pathlib import Path

import gymnasium as gym

from papergym.cli import main
from papergym.core import info_keys as K
from papergym.core.trajectory import Step, Trajectory
from papergym.viewer import AssetWriter, render_report, step_records, write_report


def _write_run(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _episode(**extra: object) -> dict:
    step = {"step": 0, "reward": 0.0, "text": "obs", "action": "act"}
    return {"episode": 0, "seed": 0, "task_id": "t/0", "success": False, "return": 0.0, "steps": 1,
            "env": "papergym/X-v0", "trace": [step], **extra}  # fmt: skip


def test_agent_text_is_escaped(tmp_path: Path) -> None:
    ep = _episode()
    ep["trace"][0]["action"] = "<script>alert('pwned')</script>"
    ep["trace"][0]["tool_results"] = ["<img src=x onerror=alert(1)>"]
    html = render_report(_write_run(tmp_path / "r.jsonl", [ep]))
    assert "<script>alert" not in html and "&lt;script&gt;alert(&#39;pwned&#39;)" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_report_lists_filters_checks_and_components(tmp_path: Path) -> None:
    other = {"episode": 1, "task_id": "u/1", "success": True, "env": "papergym/Y-v0"}
    eps = [_episode(), {**_episode(), **other}]
    eps[0]["trace"][0].update(checks={"db": False, "said_answer": True}, reward_components={"outcome": 0.0})
    html = render_report(_write_run(tmp_path / "r.jsonl", eps))
    for value in ("<option>t/0</option>", "<option>u/1</option>", "<option>papergym/Y-v0</option>"):
        assert value in html
    assert 'data-success="true"' in html and 'data-success="false"' in html
    assert '<td class="failc">False</td>' in html and '<td class="pass">True</td>' in html
    assert "<td>outcome</td>" in html


def test_world_model_report_shows_imagined_screens_beside_real_ones(tmp_path: Path) -> None:
    run = tmp_path / "wm.jsonl"
    # with its evaluation simulator on (training=False): the real screen beside the imagined one
    argv = ["eval", "papergym/WorldModelGUI-v0", "--kw", "training=false", "--episodes", "1"]
    assert main([*argv, "--out", str(run)]) == 0
    trace = json.loads(run.read_text().splitlines()[0])["trace"]
    assert all(s["imagined_screen"].endswith("_wm.png") for s in trace)
    html = write_report(run).read_text()
    assert html.count('class="imagined"') == len(trace) == html.count('class="screen"')
    assert 'src="data:image/png;base64,' in html and "wm.assets/" not in html  # self-contained


def test_view_command_writes_the_html(tmp_path: Path, gui_run: Path) -> None:
    out = tmp_path / "report.html"
    assert main(["view", str(gui_run), "--out", str(out)]) == 0
    html = out.read_text()
    assert json.loads(gui_run.read_text().splitlines()[0])["task_id"] in html
    assert "http://" not in html and "https://" not in html  # no CDN


def test_failed_service_episode_shows_its_db_against_the_gold_db(tmp_path: Path) -> None:
    env = gym.make("papergym/ServiceAgent-v0")
    env.reset(seed=0)
    plan, done = [], False
    while not done:  # the oracle's episode, to find its last tool call
        plan.append(env.unwrapped.oracle_action())
        done = any(env.step(plan[-1])[2:4])
    skip = max(i for i, a in enumerate(plan) if "<tool_call>" in a)
    obs, info = env.reset(seed=0)
    steps = []
    for action in plan[:skip] + plan[skip + 1 :]:
        next_obs, reward, term, trunc, info = env.step(action)
        steps.append(Step(obs, action, float(reward), info))
        obs = next_obs
        if term or trunc:
            break
    assert info[K.CHECKS]["db"] is False and info[K.DB_DIFF]
    run = tmp_path / "svc.jsonl"
    trace = step_records(Trajectory("t", 0, steps, False), episode=0, assets=AssetWriter(run))
    _write_run(run, [{**_episode(), "trace": trace}])
    html = render_report(run)
    entry = info[K.DB_DIFF][0]
    assert f"<code>{entry['table']}/{entry['key']}</code>" in html
    assert '<span class="del">-' in html  # a gold line the final database lacks
