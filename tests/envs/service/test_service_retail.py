"""ServiceAgent-v0, retail generated default: templates, oracle, tau2-exact checks, limits, users, judges."""

from __future__ import annotations

import json
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.backends import ModelUser
from papergym.core import info_keys as K
from papergym.core.errors import BackendError
from papergym.core.tool_calls import ToolCall
from papergym.envs.service.evaluation import ScriptedJudge
from papergym.envs.service.retail.templates import TEMPLATES
from papergym.envs.service.service_env import ServiceAgentEnv
from papergym.envs.service.user import ScriptedUser
from tests.backends.fake_openai_server import FakeOpenAIServer, reply_text
from tests.backends.scripted import ScriptedChat
from tests.envs.service.oracle_play import (
    assert_oracle_solves,
    assert_templates_cover_both_splits,
    play_oracle,
    task_ids_by_template,
)

PER_TEMPLATE = 2


def _env(**kwargs: Any) -> ServiceAgentEnv:
    return gym.make("papergym/ServiceAgent-v0", **kwargs).unwrapped


TASK_IDS = task_ids_by_template(_env(), TEMPLATES, per_template=PER_TEMPLATE)


def test_there_are_at_least_30_templates_and_some_use_values_read_early() -> None:
    assert_templates_cover_both_splits(TEMPLATES, TASK_IDS)


@pytest.mark.parametrize("template", [t.name for t in TEMPLATES])
def test_the_oracle_solves_every_template_in_both_splits(template: str) -> None:
    env = _env()
    for split in ("train", "test"):
        assert_oracle_solves(env, TASK_IDS[(template, split)])


def test_splits_use_disjoint_users() -> None:
    env = _env()
    users = {
        s: {env.generated_task(s, i).criteria.actions[1].arguments["user_id"] for i in range(60)}
        for s in ("train", "test")
    }
    assert users["train"] and users["test"] and not users["train"] & users["test"]


def test_the_oracle_reads_ids_from_tool_results_not_from_the_task() -> None:
    env = _env()
    task_id = TASK_IDS[("return_find_order", "train")][0]
    env.reset(options={"task_id": task_id})
    plan = env._s.task.plan
    ids = {json.dumps(a.arguments) for a in env._s.task.criteria.actions}
    assert not any(order_id in repr(plan) for order_id in ids if "#W" in order_id)
    assert "#W" not in repr(plan) and "gift_card_" not in repr(plan)


def _first(template: str) -> str:
    return TASK_IDS[(template, "train")][0]


def test_a_wrong_write_scores_zero_through_the_db_check() -> None:
    def wrong_reason(action: str) -> list[str]:
        return (
            [action.replace("no longer needed", "ordered by mistake")]
            if "cancel_pending_order" in action
            else [action]
        )

    reward, info, _ = play_oracle(_env(), _first("cancel_no_longer_needed"), wrong_reason)
    assert reward == 0.0 and info[K.CHECKS]["db"] is False and not info[K.SUCCESS]


def test_an_extra_write_scores_zero_through_the_db_check() -> None:
    env = _env()
    extra = ToolCall(
        "modify_user_address",
        {
            "user_id": "",
            "address1": "1 Extra Road",
            "address2": "",
            "city": "Austin",
            "state": "TX",
            "country": "USA",
            "zip": "73301",
        },
    )

    def add_write(action: str) -> list[str]:
        if "get_user_details" in action:
            user_id = json.loads(action[len("<tool_call>") : -len("</tool_call>")])["arguments"]["user_id"]
            call = ToolCall(extra.name, {**extra.arguments, "user_id": user_id})
            return [action, call.format()]
        return [action]

    reward, info, actions = play_oracle(env, _first("cancel_no_longer_needed"), add_write)
    assert any("1 Extra Road" in a for a in actions)
    assert reward == 0.0 and info[K.CHECKS] == {"db": False, "communicate": True}


def test_a_missing_communication_scores_zero() -> None:
    def mute(action: str) -> list[str]:
        return ["Your tracking number is ready."] if action.startswith("The tracking id") else [action]

    reward, info, _ = play_oracle(_env(), _first("info_tracking"), mute)
    assert reward == 0.0 and info[K.CHECKS] == {"db": True, "communicate": False}


def test_a_forbidden_write_fails_the_scripted_nl_assertion_and_is_refused_by_the_tools() -> None:
    env = _env()
    task_id = _first("refuse_cancel_delivered")
    env.reset(options={"task_id": task_id})
    order_id = env._s.task.criteria.actions[-1].arguments["order_id"]

    def try_cancel(action: str) -> list[str]:
        if action.startswith("I'm sorry"):
            return [
                ToolCall(
                    "cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"}
                ).format(),
                action,
            ]
        return [action]

    reward, info, _ = play_oracle(env, task_id, try_cancel)
    assert reward == 0.0 and info[K.CHECKS]["nl_assertion"] is False and info[K.CHECKS]["db"] is True


def test_policy_guard_refuses_writes_before_authentication_and_on_other_users() -> None:
    env = _env()
    env.reset(options={"task_id": _first("cancel_no_longer_needed")})
    order_id = env._s.task.criteria.actions[-1].arguments["order_id"]
    cancel = ToolCall("cancel_pending_order", {"order_id": order_id, "reason": "no longer needed"}).format()
    _, _, _, _, info = env.step(cancel)
    assert "authenticate" in info[K.TOOL_RESULTS][0] and env._s.errors == 1
    assert env._s.db.touched() == set()
    other = next(
        o
        for o in env._base()["orders"].values()
        if o["user_id"] != env._s.task.criteria.actions[1].arguments["user_id"]
    )
    while "cancel_pending_order" not in env.oracle_action():
        env.step(env.oracle_action())
    _, _, _, _, info = env.step(
        ToolCall(
            "cancel_pending_order", {"order_id": other["order_id"], "reason": "no longer needed"}
        ).format()
    )
    assert "another user" in info[K.TOOL_RESULTS][0] and env._s.errors == 2
    assert _env(enforce_policy=False).enforce_policy is False


def test_malformed_calls_are_invalid_with_a_format_penalty_and_counted() -> None:
    env = _env()
    env.reset(seed=1)
    _, reward, _, _, info = env.step('<tool_call>{"name": "no_such_tool", "arguments": {}}</tool_call>')
    assert info[K.INVALID_ACTION] and reward == pytest.approx(-0.1)
    assert info[K.TOOL_RESULTS][0] == "Error: Tool 'no_such_tool' not found."  # tau2's text
    _, _, _, _, info = env.step(
        '<tool_call>{"name": "get_order_details", "arguments": {"id": 3}}</tool_call>'
    )
    assert info[K.INVALID_ACTION] and env._s.errors == 2
    _, reward, _, _, info = env.step("<tool_call>{oops</tool_call>")
    assert info[K.INVALID_ACTION] and reward == pytest.approx(-0.1)


def test_ten_tool_errors_end_the_episode_with_zero() -> None:
    env = _env()
    env.reset(seed=2)
    bad = '<tool_call>{"name": "get_order_details", "arguments": {"order_id": "#W0"}}</tool_call>'
    for i in range(10):
        _, reward, terminated, truncated, info = env.step(bad)
        assert (terminated, truncated) == ((True, False) if i == 9 else (False, False))
    assert reward == 0.0 and info[K.SUCCESS] is False and info[K.REWARD_COMPONENTS]["outcome"] == 0.0


def test_the_step_limit_truncates_with_zero() -> None:
    env = _env(max_steps=3)
    env.reset(seed=3)
    calc = '<tool_call>{"name": "calculate", "arguments": {"expression": "1 + 1"}}</tool_call>'
    results = [env.step(calc) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    assert results[-1][1] == 0.0 and results[-1][4][K.SUCCESS] is False


def test_only_the_user_ends_the_call_and_a_confused_user_gives_up_scoring_zero() -> None:
    env = _env()
    env.reset(options={"task_id": _first("cancel_no_longer_needed")})
    obs, reward, terminated, _, _ = env.step("Goodbye. ###STOP###")
    assert not terminated and reward == 0.0 and "say that again" in obs
    obs, _, terminated, _, _ = env.step("<think>###STOP###</think>")
    assert not terminated and "say that again" in obs
    obs, reward, terminated, _, info = env.step("###STOP###")  # the third message it cannot understand
    assert terminated and "###GIVE-UP###" in obs and reward == 0.0 and not info[K.SUCCESS]
    assert info[K.CHECKS] == {}  # a give-up is not evaluated


def test_scripted_user_answers_confirms_withholds_and_stops() -> None:
    env = _env()
    task = env.generated_task("train", int(_first("info_status").rsplit("/", 1)[1]))
    user = ScriptedUser().for_task(task)
    opening = user.reply([])
    assert opening == task.reason_for_call
    dialogue = [{"role": "user", "content": opening}]

    def say(text: str) -> str:
        dialogue.append({"role": "assistant", "content": text})
        reply = user.reply(dialogue)
        dialogue.append({"role": "user", "content": reply})
        return reply

    assert say("Do you confirm (yes/no)?") == "Yes, please go ahead."
    assert "don't know my user id" in say("What is your user id?")
    assert say("What colour is your car?") == "I'm not sure, sorry."
    assert say("What colour is your car, then?") == "###OUT-OF-SCOPE###"
    assert say("It is done.").endswith("###STOP###")
    assert say("I am transferring you to a human agent.") == "###TRANSFER###"


def test_scripted_judge_predicates() -> None:
    transcript = (
        '[user] hi\n[assistant] Your order is Delivered.\n[tool_call] get_order_details {"order_id": "#1"}'
    )
    judge = ScriptedJudge()
    assert judge.score("", transcript, criterion="said:delivered") == 1.0
    assert judge.score("", transcript, criterion="not_said:delivered") == 0.0
    assert judge.score("", transcript, criterion="called:get_order_details") == 1.0
    assert judge.score("", transcript, criterion="not_called:cancel_pending_order") == 1.0
    with pytest.raises(ValueError, match="predicate"):
        judge.score("", transcript, criterion="maybe:x")


def test_model_user_gets_the_scenario_and_its_backend_error_truncates_the_episode() -> None:
    pytest.importorskip("openai")
    from papergym.backends.openai_compat import OpenAIChatModel

    with FakeOpenAIServer(["ok"], default="500") as server:
        model = OpenAIChatModel(server.url, "m", api_key="test", max_retries=0, backoff_s=0.01)
        env = _env(user=ModelUser(model))
        obs, info = env.reset(seed=0)
        assert obs.endswith(reply_text(server.requests[0]).strip())
        system = server.requests[0]["messages"][0]["content"]
        assert "<scenario>" in system and env._s.task.reason_for_call in system
        _, reward, terminated, truncated, info = env.step("How can I help you?")
        assert truncated and not terminated and reward == 0.0
        assert info[K.ERROR]["type"] == "BackendError" and info[K.SUCCESS] is False


def test_a_user_failing_at_reset_truncates_the_first_step() -> None:
    class Broken:
        def reply(self, messages: Any, *, seed: int | None = None) -> str:
            raise BackendError("down", retryable=True)

    env = _env(user=Broken())
    _, info = env.reset(seed=0)
    assert info[K.ERROR]["message"] == "down"
    _, reward, _, truncated, info = env.step("hello")
    assert truncated and reward == 0.0 and info[K.ERROR]["retryable"] is True


def test_a_model_user_drives_a_conversation() -> None:
    chat = ScriptedChat("I want to check my order.", "###STOP###")
    env = _env(user=ModelUser(chat))
    obs, _ = env.reset(seed=0)
    assert obs.endswith("I want to check my order.")
    _, _, terminated, _, info = env.step("Sure, what is your email?")
    assert terminated and K.CHECKS in info
    assert chat.calls[1]["messages"][-1] == {"role": "user", "content": "Sure, what is your email?"}


def test_user_lookups_agree_with_a_scan_and_follow_address_changes() -> None:
    from papergym.envs.service.db import ServiceDB
    from papergym.envs.service.retail.tools import RetailTools

    base = _env()._base()
    tools = RetailTools(ServiceDB(base))
    for user in list(base["users"].values())[:50]:
        name, zip_code = user["name"], user["address"]["zip"]
        scan = next(
            u["user_id"]
            for u in base["users"].values()
            if (u["name"]["first_name"], u["name"]["last_name"], u["address"]["zip"])
            == (name["first_name"], name["last_name"], zip_code)
        )
        assert (
            tools.call(
                "find_user_id_by_name_zip",
                {"first_name": name["first_name"].upper(), "last_name": name["last_name"], "zip": zip_code},
            ).value
            == scan
        )
        assert tools.call("find_user_id_by_email", {"email": user["email"].upper()}).value == user["user_id"]
    user = next(iter(base["users"].values()))
    address = {**user["address"], "zip": "00001"}
    assert not tools.call("modify_user_address", {"user_id": user["user_id"], **address}).error
    args = {"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"]}
    assert tools.call("find_user_id_by_name_zip", {**args, "zip": user["address"]["zip"]}).error
    assert tools.call("find_user_id_by_name_zip", {**args, "zip": "00001"}).value == user["user_id"]


def test_the_speed_benchmark_runs_and_writes_its_section(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[3] / "benchmarks"))
    import service_speed

    rows = service_speed.run(4, None)
    assert [name for name, _ in rows] == ["generated retail, 4 tasks (all templates), scripted user"]
    assert rows[0][1]["tool"][0] > 0 and rows[0][1]["episode"][0] > 0
    readme = tmp_path / "README.md"
    readme.write_text("# Benchmarks\n", encoding="utf-8")
    for _ in range(2):  # rewrites its own block only
        service_speed.write_section(readme, "service_speed", "Service agent speed", service_speed.table(rows))
    text = readme.read_text(encoding="utf-8")
    assert text.count("<!-- service_speed:begin -->") == 1 and "tau2-bench `tau-bench-v0`" in text
