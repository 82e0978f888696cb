"""``papergym eval`` driven by a model backend: a tiny local checkpoint and a fake OpenAI server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from papergym.cli import build_parser, main
from tests.backends.fake_openai_server import FakeOpenAIServer

Server = Callable[..., FakeOpenAIServer]
ENV = "papergym/Reasoning-v0"


def run_eval(policy: str, out: Path, episodes: int = 3) -> list[dict]:
    assert main(["eval", ENV, "--policy", policy, "--episodes", str(episodes), "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_eval_with_a_local_checkpoint(
    tiny_checkpoint: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    records = run_eval(f"hf:{tiny_checkpoint}", tmp_path / "hf.jsonl")
    assert [r["episode"] for r in records] == [0, 1, 2]
    assert all("error" not in r and r["steps"] == 1 for r in records)
    assert "n=3" in capsys.readouterr().out
    again = run_eval(f"hf:{tiny_checkpoint}", tmp_path / "hf2.jsonl")
    assert again == records  # greedy: the evaluation replays exactly


def test_eval_against_a_server(fake_server: Server, tmp_path: Path) -> None:
    server = fake_server()
    records = run_eval(f"openai:{server.url}#m", tmp_path / "oa.jsonl")
    assert len(records) == 3 and all("error" not in r for r in records)
    assert server.count == 3
    assert [r["messages"][-1]["role"] for r in server.requests] == ["user"] * 3  # type: ignore[index]
    assert len({r["seed"] for r in server.requests}) == 3  # type: ignore[index]


def test_eval_records_a_backend_fault_and_goes_on(
    fake_server: Server, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # episode 0 recovers from a hang, 1 fails twice (max_retries=1), 2 from a dropped connection,
    # 3 from a malformed reply, 4 gets a client error (no retry). The 1 s client timeout only has to
    # outlast a loopback reply; the hang lasts until the server stops, so the counts never race.
    server = fake_server(["hang", "ok", "500", "500", "close", "ok", "malformed", "ok", "400"])
    spec = f"openai:{server.url}#m?timeout=1.0&max_retries=1&backoff_s=0.01"
    records = run_eval(spec, tmp_path / "faults.jsonl", episodes=5)
    assert server.count == 9
    assert [("error" in r) for r in records] == [False, True, False, False, True]
    failed, client_error = records[1], records[4]
    assert failed["success"] is False and failed["truncated"] is True and failed["steps"] == 0
    assert failed["error"]["type"] == "BackendError" and failed["error"]["retryable"] is True
    assert "HTTP 500" in failed["error"]["message"]
    assert client_error["error"]["retryable"] is False and "HTTP 400" in client_error["error"]["message"]
    assert failed["task_id"]  # the task that was being played is still named
    assert "2 ended by a backend error" in capsys.readouterr().out


def test_eval_with_the_replay_cache(fake_server: Server, tmp_path: Path) -> None:
    server = fake_server()
    spec = f"openai:{server.url}#m?cache={tmp_path / 'cache.db'}"
    first = run_eval(spec, tmp_path / "a.jsonl")
    second = run_eval(spec, tmp_path / "b.jsonl")
    assert first == second and server.count == 3


def test_unknown_or_bad_policies_exit_with_a_message() -> None:
    with pytest.raises(SystemExit, match="unknown policy"):
        main(["eval", ENV, "--policy", "gpt", "--episodes", "1"])
    with pytest.raises(SystemExit, match="local checkpoints only"):
        main(["eval", ENV, "--policy", "hf:/no/such/dir", "--episodes", "1"])


def test_the_help_lists_the_model_policies() -> None:
    help_text = build_parser()._subparsers._group_actions[0].choices["eval"].format_help()  # type: ignore[union-attr]
    assert "hf:PATH" in help_text and "openai:URL#MODEL" in help_text
