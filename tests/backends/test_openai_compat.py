"""OpenAIChatModel against a fake OpenAI-compatible server on loopback, faults included."""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable

import pytest

from papergym.backends.protocols import ChatModel
from papergym.core.errors import BackendError, DependencyNotInstalled
from tests.backends.fake_openai_server import FakeOpenAIServer, reply_text

pytest.importorskip("openai")

from papergym.backends.openai_compat import OpenAIChatModel

Server = Callable[..., FakeOpenAIServer]
MESSAGES = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "What is 2 + 2?"}]


HEALTHY_TIMEOUT_S = 60.0
"""Client timeout where no reply hangs: far above any loopback reply on a loaded machine, so no healthy
request times out and the attempt counts the tests assert depend on the script alone."""
HANG_TIMEOUT_S = 1.0
"""Client timeout where a scripted reply hangs (until the server stops): the hang always outlasts it,
and a healthy reply never comes near it; only tests that script a hang use it."""


def make(server: FakeOpenAIServer, **kwargs: object) -> OpenAIChatModel:
    options: dict = {"timeout": HEALTHY_TIMEOUT_S, "max_retries": 3, "backoff_s": 1e-3, "max_backoff_s": 0.01}
    options.update(kwargs)
    return OpenAIChatModel(server.url, "m", api_key="test", **options)


def test_a_healthy_reply_is_returned_with_its_usage(fake_server: Server) -> None:
    server = fake_server()
    model = make(server)
    assert isinstance(model, ChatModel)
    text = model.chat(MESSAGES, seed=5, max_tokens=7, temperature=0.25)
    assert text == reply_text(server.requests[-1])
    body = server.requests[-1]
    assert (body["seed"], body["max_tokens"], body["temperature"], body["model"]) == (5, 7, 0.25, "m")
    assert body["messages"] == MESSAGES
    usage = model.usage.as_dict()
    assert usage["model_calls"] == 1 and usage["retries"] == 0 and usage["failures"] == 0
    assert usage["prompt_tokens"] == 7  # the fake server counts words
    assert usage["completion_tokens"] == len(text.split())


def test_no_seed_is_sent_when_none_and_extra_body_is_passed(fake_server: Server) -> None:
    server = fake_server()
    make(server, extra_body={"top_k": 3}).chat(MESSAGES)
    assert "seed" not in server.requests[-1]
    assert server.requests[-1]["top_k"] == 3


def test_every_fault_is_retried_and_the_healthy_reply_used(fake_server: Server) -> None:
    faults = ["500", "hang", "close", "malformed", "no_choices", "429"]
    server = fake_server(faults)
    model = make(server, max_retries=len(faults), timeout=HANG_TIMEOUT_S)
    text = model.chat(MESSAGES, seed=1)
    assert server.behaviours == [*faults, "ok"]
    assert text == reply_text(server.requests[-1])
    usage = model.usage.as_dict()
    assert (usage["retries"], usage["model_calls"], usage["failures"]) == (len(faults), 1, 0)


@pytest.mark.parametrize("fault", ["500", "hang", "close", "malformed", "429"])
def test_persistent_faults_end_in_a_backend_error_after_the_retries(fault: str, fake_server: Server) -> None:
    server = fake_server(default=fault)
    model = make(server, max_retries=2, timeout=HANG_TIMEOUT_S if fault == "hang" else HEALTHY_TIMEOUT_S)
    with pytest.raises(BackendError) as info:
        model.chat(MESSAGES)
    assert server.count == 3  # exactly max_retries + 1 attempts
    assert info.value.retryable
    assert "3 attempts failed" in str(info.value)
    usage = model.usage.as_dict()
    assert (usage["retries"], usage["failures"], usage["model_calls"]) == (2, 1, 0)
    assert set(server.behaviours) == {fault}


def test_a_client_error_fails_fast(fake_server: Server) -> None:
    server = fake_server(["400"])
    model = make(server)
    with pytest.raises(BackendError, match="HTTP 400") as info:
        model.chat(MESSAGES)
    assert not info.value.retryable
    assert server.count == 1
    assert model.chat(MESSAGES) == reply_text(server.requests[-1])  # the next request is fine


def test_backoff_doubles_and_is_capped(fake_server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    import papergym.backends.openai_compat as module

    delays: list[float] = []
    monkeypatch.setattr(module.time, "sleep", delays.append)
    server = fake_server(default="500")
    with pytest.raises(BackendError):
        make(server, max_retries=5, backoff_s=0.5, max_backoff_s=3.0).chat(MESSAGES)
    assert delays == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_pickles_without_its_client(fake_server: Server) -> None:
    server = fake_server()
    model = make(server)
    model.chat(MESSAGES)
    copy = pickle.loads(pickle.dumps(model))
    assert copy.usage.model_calls == 1
    assert copy.chat(MESSAGES, seed=2) == reply_text(server.requests[-1])


def test_api_key_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert OpenAIChatModel("http://127.0.0.1:9/v1", "m").api_key == "EMPTY"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert OpenAIChatModel("http://127.0.0.1:9/v1", "m").api_key == "sk-x"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="timeout"):
        OpenAIChatModel("http://127.0.0.1:9/v1", "m", timeout=0)
    with pytest.raises(ValueError, match="max_retries"):
        OpenAIChatModel("http://127.0.0.1:9/v1", "m", max_retries=-1)
    with pytest.raises(ValueError, match="model"):
        OpenAIChatModel("http://127.0.0.1:9/v1", "")


def test_a_missing_openai_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(DependencyNotInstalled, match=r"papergym\[remote\]"):
        OpenAIChatModel("http://127.0.0.1:9/v1", "m")
