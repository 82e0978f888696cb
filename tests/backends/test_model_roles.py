"""The Model<Role> backends, each with a scripted ChatModel: prompt assembly and reply parsing."""

from __future__ import annotations

import logging

import pytest

from papergym.backends.model_roles import (
    ModelAnnotator,
    ModelCritic,
    ModelJudge,
    ModelReader,
    ModelUser,
    parse_json_list,
    parse_score,
)
from papergym.backends.protocols import Annotator, Critic, Judge, Reader, UserSimulator
from papergym.core.errors import BackendError
from tests.backends.scripted import ScriptedChat

DIALOGUE = [
    {"role": "system", "content": "agent policy"},
    {"role": "user", "content": "my router is down"},
    {"role": "assistant", "content": "have you restarted it?"},
]


def test_each_role_satisfies_its_protocol() -> None:
    model = ScriptedChat()
    assert isinstance(ModelJudge(model), Judge)
    assert isinstance(ModelCritic(model), Critic)
    assert isinstance(ModelReader(model), Reader)
    assert isinstance(ModelUser(model), UserSimulator)
    assert isinstance(ModelAnnotator(model), Annotator)


def test_judge_prompt_and_score() -> None:
    model = ScriptedChat("Score: 0.75 out of 1")
    judge = ModelJudge(model)
    assert judge.score("What is 2+2?", "4", criterion="correct arithmetic", seed=9) == 0.75
    system, user = model.last["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    for part in ("What is 2+2?", "4", "correct arithmetic"):
        assert part in user["content"]
    assert (model.last["seed"], model.last["temperature"], model.last["max_tokens"]) == (9, 0.0, 32)
    judge.score("p", "r")
    assert ModelJudge.DEFAULT_CRITERION in model.last["messages"][1]["content"]


def test_an_unreadable_judge_reply_scores_zero_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    judge = ModelJudge(ScriptedChat("I'd give it 8/10"))
    with caplog.at_level(logging.WARNING, logger="papergym.backends.model_roles"):
        assert judge.score("p", "r") == 0.0
    assert "no score" in caplog.text


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("1", 1.0),
        ("0", 0.0),
        (".5", 0.5),
        ("score 2, or rather 0.4", 0.4),
        ("1e-1", 0.1),
        ("-0.3", None),
        ("", None),
    ],
)
def test_parse_score(reply: str, expected: float | None) -> None:
    assert parse_score(reply) == expected


def test_custom_prompts_replace_the_defaults() -> None:
    model = ScriptedChat("  the plan skips step 2  ")
    critic = ModelCritic(model, system_prompt="", template="Q={question} T={trajectory}", max_tokens=64)
    assert critic.feedback("fix it", DIALOGUE[1:], seed=3) == "the plan skips step 2"
    assert model.last["messages"] == [
        {"role": "user", "content": "Q=fix it T=[user] my router is down\n[assistant] have you restarted it?"}
    ]
    assert (model.last["seed"], model.last["max_tokens"]) == (3, 64)


def test_reader_prompt() -> None:
    model = ScriptedChat(" Paris \n")
    assert ModelReader(model).answer("Capital of France?", "France's capital is Paris.", seed=1) == "Paris"
    content = model.last["messages"][-1]["content"]
    assert "Capital of France?" in content and "France's capital is Paris." in content


def test_user_speaks_through_a_role_swapped_dialogue() -> None:
    model = ScriptedChat("yes, twice")
    user = ModelUser(model, system_prompt="You are Ana; your router is down.")
    assert user.reply(DIALOGUE, seed=5) == "yes, twice"
    assert model.last["messages"] == [
        {"role": "system", "content": "You are Ana; your router is down."},
        {"role": "user", "content": ModelUser.DEFAULT_TEMPLATE},  # the user spoke first: an opening cue
        {"role": "assistant", "content": "my router is down"},
        {"role": "user", "content": "have you restarted it?"},
    ]
    user.reply([])
    assert [m["role"] for m in model.last["messages"]] == ["system", "user"]
    user.reply([{"role": "assistant", "content": "How can I help?"}])
    assert model.last["messages"][1:] == [{"role": "user", "content": "How can I help?"}]


def test_annotator_parses_a_json_list() -> None:
    reply = 'Here you go:\n```json\n[{"step": 0, "influential": true, "reason": "asked"}]\n```'
    model = ScriptedChat(reply)
    assert ModelAnnotator(model).annotate(DIALOGUE, seed=2) == [
        {"step": 0, "influential": True, "reason": "asked"}
    ]
    assert "[assistant] have you restarted it?" in model.last["messages"][-1]["content"]
    assert '{"step": <index from 0>' in model.last["messages"][-1]["content"]  # the template's literal braces


@pytest.mark.parametrize("reply", ["no json here", "[1, 2]", '{"step": 0}', "[{bad json}]"])
def test_annotator_rejects_anything_else(reply: str) -> None:
    with pytest.raises(BackendError) as info:
        ModelAnnotator(ScriptedChat(reply)).annotate(DIALOGUE)
    assert not info.value.retryable


def test_parse_json_list_direct() -> None:
    assert parse_json_list("[]") == []


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        ModelReader(ScriptedChat(), max_tokens=0)
    with pytest.raises(ValueError, match="temperature"):
        ModelReader(ScriptedChat(), temperature=-0.1)
