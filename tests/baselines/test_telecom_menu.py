"""The learned telecom menu policy: reading the conversation, labels that say what the env's oracle says and
visit the states the policy visits, behaviour cloning, same seed same run, and GRPO with either credit."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("torch")

from papergym.baselines import menu_grpo
from papergym.baselines import telecom_menu as tm
from papergym.core.tool_calls import parse_tool_calls

ENV_KW = ["domain=telecom", "obs_mode=chat", "format_penalty=0", "max_steps=30"]
ARGS = menu_grpo.Args(menu="telecom", env="papergym/ServiceAgent-v0", env_kw=ENV_KW)


@pytest.fixture(scope="module")
def env():
    env = menu_grpo.make_env(ARGS.env, ARGS.env_kw)
    yield env
    env.close()


def _msg(role: str, text: str) -> dict[str, str]:
    return {"role": role, "content": text}


def test_reading_follows_the_phone_the_account_and_the_phone_reports() -> None:
    customer = '{"customer_id": "C1", "line_ids": ["L1", "L2"]}'
    line = '{"line_id": "L2", "phone_number": "555-1", "status": "Suspended", "plan_id": "P1"}'
    talk = [
        _msg("user", "Hi, my phone shows no service: I can't make calls or use mobile data."),
        _msg("assistant", tm.ASK_PHONE),
        _msg("user", "My phone number is 555-1."),
    ]
    reading = tm.TelecomReading.of(talk)
    assert reading.kind == "service" and reading.phone == "555-1" and reading.identity() == 1
    assert parse_tool_calls(reading.read_call("lookup")).calls[0].arguments == {"phone_number": "555-1"}
    lookup = reading.read_call("lookup")
    talk += [_msg("assistant", lookup), _msg("tool", customer)]
    reading = tm.TelecomReading.of(talk)
    assert reading.identity() == 2 and parse_tool_calls(reading.read_call("lookup")).calls[0].arguments == {
        "id": "L1"
    }
    talk += [_msg("assistant", reading.read_call("lookup")), _msg("tool", "Error: no such line")]
    failed = tm.TelecomReading.of(talk)
    assert failed.failed and failed.last_event == "get_details_by_id:error"
    talk += [
        _msg("assistant", '<tool_call>{"name": "get_details_by_id", "arguments": {"id": "L2"}}</tool_call>')
    ]
    talk += [_msg("tool", line)]
    reading = tm.TelecomReading.of(talk)
    assert not reading.failed and reading.line()["line_id"] == "L2" and "line:Suspended" in reading.state()
    assert parse_tool_calls(reading.write_call("resume_line")).calls[0].arguments == {
        "customer_id": "C1",
        "line_id": "L2",
    }
    talk += [
        _msg("assistant", "Please also check your SIM card status."),
        _msg("user", "SIM 2 of 3 missing."),
    ]
    reading = tm.TelecomReading.of(talk)
    assert reading.instructed == {tm.INSTRUCTIONS.index("Please check your SIM card status.")}
    assert reading.state().endswith("last:SIM # of # missing.") and not reading.confirmed
    talk += [_msg("assistant", reading.confirmation("resume_line")), _msg("user", "Yes, please go ahead.")]
    assert tm.TelecomReading.of(talk).confirmed


def test_the_state_masks_values_so_tasks_of_one_kind_share_rows(env) -> None:
    rows: dict[str, set[int]] = {}
    for seed in range(12):
        observation, _ = env.reset(seed=seed, options=menu_grpo.TRAIN_OPTIONS)
        env.step(env.unwrapped.oracle_action())  # the question for the phone number
        observation, *_ = env.step(env.unwrapped.oracle_action())  # the customer lookup
        reading = tm.TelecomReading.of(observation)
        key = f"{reading.kind} {'abroad' in reading.opening} {reading.offered_gb > 0}"
        rows.setdefault(key, set()).add(reading.row())
    assert len(rows) > 1 and all(len(r) == 1 for r in rows.values())


def _replay(env, seed: int) -> tuple[list, bool, bool]:
    """The oracle's episode as menu decisions, then those choices rendered by the menu on the same task:
    the decisions, whether every oracle turn got a label, and whether the menu's replay succeeds with each
    decision at the row the replay reads."""
    turns = []
    observation, info = env.reset(seed=seed, options=menu_grpo.TRAIN_OPTIONS)
    done = False
    while not done:
        action = env.unwrapped.oracle_action()
        turns.append((tm.TelecomReading.of(observation), action))
        observation, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert info["success"], "the oracle solves every generated task"
    decisions = tm.episode_decisions(turns)
    queue = list(decisions)
    observation, info = env.reset(seed=seed, options=menu_grpo.TRAIN_OPTIONS)
    rows_match, done = True, False
    while not done and queue:
        reading = tm.TelecomReading.of(observation)
        head, row, act = queue.pop(0)
        choice = {"act": act}
        for extra in tm.needed_heads(tm.ACTS[act]):
            _, extra_row, choice[extra] = queue.pop(0)
            rows_match &= extra_row == row
        rows_match &= head == "act" and row == reading.row()
        observation, _, terminated, truncated, info = env.step(tm.render(reading, choice))
        done = terminated or truncated
    labelled = sum(1 for d in decisions if d[0] == "act") == len(turns)
    return decisions, labelled, bool(info.get("success")) and rows_match and not queue


def test_labels_say_every_oracle_turn_and_replay_at_the_policys_own_rows(env) -> None:
    """Every oracle turn has a menu label, and the menu saying those labels solves the task while reading
    the same rows the labels were taken at (so behaviour cloning trains the rows the policy visits)."""
    seen_writes = set()
    for seed in range(40):
        decisions, labelled, replayed = _replay(env, seed)
        assert labelled and replayed, seed
        seen_writes |= {tm.WRITES[c] for h, _, c in decisions if h == "write"}
    assert {"send_payment_request", "resume_line", "enable_roaming", "refuel_data"} <= seen_writes


def test_a_wrong_label_is_not_given() -> None:
    reading = tm.TelecomReading.of([_msg("user", "Hi, I can't send picture messages (MMS) from my phone.")])
    assert tm.label(reading, "Please juggle.", None) == {"act": tm.ACTS.index("close")}
    assert tm.label(reading, "What colour is your phone?", None) is None
    assert tm.label(reading, "Please check your VPN status and restart your phone.", None) is None
    arguments = '{"customer_id": "C9", "line_id": "", "gb_amount": 2}'
    call = f'<tool_call>{{"name": "refuel_data", "arguments": {arguments}}}</tool_call>'
    assert tm.label(reading, call, None) is None  # not the arguments the menu would form
    assert tm.label(reading, "Shall I refuel? Do you confirm (yes/no)?", None) is None  # no write follows


def test_behaviour_cloning_raises_success_over_the_uniform_menu(env) -> None:
    args = dataclasses.replace(ARGS, demos=30, demo_steps=100)
    warm, uniform = menu_grpo.warm_policy(args), tm.TelecomMenu()
    rng_w, rng_u = np.random.default_rng(0), np.random.default_rng(0)
    won = {"warm": 0, "uniform": 0}
    for task in range(30):
        options = {"split": "test"}
        won["warm"] += menu_grpo.play(env, warm, rng_w, seed=10**6 + task, options=options)[0].success
        won["uniform"] += menu_grpo.play(env, uniform, rng_u, seed=10**6 + task, options=options)[0].success
    assert won["warm"] > won["uniform"] + 3, won


def test_same_seed_same_run_and_influence_credit_changes_the_update() -> None:
    args = dataclasses.replace(
        ARGS, demos=40, demo_steps=100, steps=2, tasks_per_step=4, group_size=4, optimizer="sgd", lr=20.0
    )
    varied: list[bool] = []

    def on_step(step: int, metrics: dict[str, float], trajs: list) -> None:
        groups = [trajs[i : i + args.group_size] for i in range(0, len(trajs), args.group_size)]
        varied.extend(len({t.success for t in g}) > 1 for g in groups)

    first = menu_grpo.train(args, on_step=on_step).heads.logits
    assert any(varied), "no group with reward variance: no update to compare"
    second = menu_grpo.train(args).heads.logits
    iapo = menu_grpo.train(dataclasses.replace(args, advantage_hook="influence")).heads.logits
    assert all(bool((first[h] == second[h]).all()) for h in tm.HEADS)
    assert any(not bool((first[h] == iapo[h]).all()) for h in tm.HEADS)


def test_menu_registry_and_text_observations_fail_clearly(env) -> None:
    assert menu_grpo.menu_class("telecom") is tm.TelecomMenu
    with pytest.raises(ValueError, match="no menu 'airline'"):
        menu_grpo.menu_class("airline")
    text_env = menu_grpo.make_env(ARGS.env, [k for k in ENV_KW if k != "obs_mode=chat"])
    try:
        with pytest.raises(ValueError, match="obs_mode='chat'"):
            menu_grpo.play(text_env, tm.TelecomMenu(), np.random.default_rng(0), seed=1, options={})
    finally:
        text_env.close()
