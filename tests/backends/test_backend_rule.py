"""The backend rule of `papergym.backends`, checked on every env that takes a model in the loop: None is the
embedded default, a name resolves, a bare ChatModel becomes the role's Model* class, an object with the
role's method is used as is, anything else is a clear error; a feature that can be off has its own flag."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401  # registers the ids
from papergym.backends import ModelJudge, ModelReader, ModelUser
from papergym.envs.memory_qa.reader import ExtractiveReader
from papergym.envs.mobile_gui.world_model_env import SCREEN_CHECK
from papergym.envs.mobile_gui.world_models import CodeWorldModel, JsonSuccessJudge, SimulatorWorldModel
from papergym.envs.selfplay.judges import BTJudge, ModelPreferenceJudge
from papergym.envs.selfplay.selfplay_env import make_judge
from papergym.envs.service.evaluation import NL_JUDGE_TEMPLATE
from papergym.envs.service.telecom.user import DeviceModelUser
from papergym.envs.service.user import ScriptedUser
from tests.backends.scripted import ScriptedChat


def _unwrapped(env_id: str, **kwargs: Any) -> Any:
    return gym.make(env_id, **kwargs).unwrapped


# (env id, extra kwargs, backend kwarg, embedded default's type, a registered name, the ChatModel wrapper)
CASES = [
    ("papergym/ServiceAgent-v0", {}, "user", ScriptedUser, "scripted", ModelUser),
    ("papergym/ServiceAgent-v0", {"domain": "telecom"}, "user", ScriptedUser, "scripted", DeviceModelUser),
    ("papergym/MemoryQA-v0", {}, "reader", ExtractiveReader, "extractive", ModelReader),
    ("papergym/WorldModelGUI-v0", {}, "world_model", SimulatorWorldModel, "simulator", CodeWorldModel),
]


@pytest.mark.parametrize(("env_id", "extra", "kwarg", "default", "name", "wrapper"), CASES)
def test_none_a_name_a_chat_model_and_a_role_object_resolve(
    env_id, extra, kwarg, default, name, wrapper
) -> None:
    attribute = kwarg
    assert isinstance(getattr(_unwrapped(env_id, **extra), attribute), default)
    assert isinstance(getattr(_unwrapped(env_id, **extra, **{kwarg: name}), attribute), default)
    chat = ScriptedChat("ok")
    wrapped = getattr(_unwrapped(env_id, **extra, **{kwarg: chat}), attribute)
    assert type(wrapped) is wrapper and wrapped.model is chat
    assert getattr(_unwrapped(env_id, **extra, **{kwarg: wrapped}), attribute) is wrapped  # a role: as is
    with pytest.raises(ValueError, match=f"unknown {kwarg} 'nope'"):
        _unwrapped(env_id, **extra, **{kwarg: "nope"})
    with pytest.raises(ValueError, match=f"{kwarg} must be None"):
        _unwrapped(env_id, **extra, **{kwarg: 42})


def test_a_model_user_passed_bare_gets_each_tasks_scenario() -> None:
    chat = ScriptedChat("Hi, I need help with an order.")
    env = _unwrapped("papergym/ServiceAgent-v0", user=chat)
    env.reset(seed=0)
    system = chat.calls[0]["messages"][0]["content"]
    assert system.startswith(ModelUser.DEFAULT_SYSTEM) and "<scenario>" in system
    assert env._s.task.reason_for_call in system
    assert env.user.task is None  # the env's user stays unbound: each reset binds a copy


def test_the_service_judge_is_an_explicit_flag() -> None:
    chat = ScriptedChat("1")
    env = _unwrapped("papergym/ServiceAgent-v0", use_judge=True, judge=chat)
    assert type(env.judge) is ModelJudge and env.judge.template == NL_JUDGE_TEMPLATE
    assert _unwrapped("papergym/ServiceAgent-v0").judge is None  # off by default
    with pytest.raises(ValueError, match="use_judge=True needs judge="):
        _unwrapped("papergym/ServiceAgent-v0", use_judge=True)
    with pytest.raises(ValueError, match="only with use_judge=True"):
        _unwrapped("papergym/ServiceAgent-v0", judge=chat)


def test_judges_of_the_gui_and_self_play_envs_follow_the_rule() -> None:
    assert _unwrapped("papergym/WorldModelGUI-v0").judge == SCREEN_CHECK
    chat = ScriptedChat('{"success": true}')
    judge = _unwrapped("papergym/WorldModelGUI-v0", judge=chat).judge
    assert type(judge) is JsonSuccessJudge and judge.model is chat
    with pytest.raises(ValueError, match="unknown judge"):
        _unwrapped("papergym/WorldModelGUI-v0", judge="llm")
    assert isinstance(make_judge(None), BTJudge) and isinstance(make_judge("bt"), BTJudge)
    assert type(make_judge(chat)) is ModelPreferenceJudge
    with pytest.raises(ValueError, match="judge must be None"):
        make_judge(3.0)  # type: ignore[arg-type]


def test_one_model_user() -> None:
    import papergym.envs.service.user as service_user

    assert not hasattr(service_user, "ModelUser")
    assert issubclass(DeviceModelUser, ModelUser)


def test_the_search_envs_critic_and_retriever_follow_the_rule() -> None:
    pytest.importorskip("bm25s")
    from papergym.backends import ModelCritic
    from papergym.envs.search.critic import CAFE_CRITIC_SYSTEM, OracleCritic

    search = "papergym/SearchCritic-v0"
    assert isinstance(_unwrapped(search).critic, OracleCritic)
    assert isinstance(_unwrapped(search, critic="oracle").critic, OracleCritic)
    chat = ScriptedChat("<feedback>Check the second hop.</feedback>")
    critic = _unwrapped(search, critic=chat).critic
    assert type(critic) is ModelCritic and critic.model is chat and critic.system_prompt == CAFE_CRITIC_SYSTEM
    assert _unwrapped(search, critic=critic).critic is critic
    with pytest.raises(ValueError, match="critic must be None"):
        _unwrapped(search, critic=42)
    assert _unwrapped(search).retriever == "bm25" and _unwrapped(search, retriever="bm25").retriever == "bm25"
    with pytest.raises(ValueError, match="unknown retriever 'tfidf'"):
        _unwrapped(search, retriever="tfidf")
    with pytest.raises(ValueError, match="retriever must be None"):
        _unwrapped(search, retriever=chat)  # a ChatModel is no retriever
