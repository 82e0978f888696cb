"""ServiceAgent-v0 on tau2-bench's own retail files (../shared/tau2/retail), run unmodified."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import papergym  # noqa: F401
from papergym.backends.model_roles import ModelJudge
from papergym.core import info_keys as K
from papergym.core.tool_calls import ToolCall
from papergym.envs.service.db import ServiceDB
from papergym.envs.service.evaluation import NL_JUDGE_TEMPLATE, replay_gold
from papergym.envs.service.retail.tools import RetailTools
from papergym.envs.service.tau2_data import load_tau2_folder
from tests.backends.scripted import ScriptedChat

TAU2_RETAIL = Path(__file__).resolve().parents[4] / "shared" / "tau2" / "retail"
pytestmark = pytest.mark.skipif(
    not (TAU2_RETAIL / "tasks.json").is_file(),
    reason=f"tau2's retail data is not at {TAU2_RETAIL} (copy tau2's data/tau2/domains/retail/ there to run)",
)

# Gold actions that fail in tau2 itself, checked by hand against db.json: the scenario has the user give a
# wrong email / name / zip first, tau2 lists a product id that is not in the catalogue ('6086499569', the
# tools' docstring example) or an order id without its 'W', asks to exchange a pending order (64) or pays a
# 21.10 price difference with a 17.00 gift card (105). tau2's evaluator replays them and ignores the error.
EXPECTED_GOLD_ERRORS = {
    *((i, "get_product_details") for i in ("2", "3", "4")),
    *((i, "find_user_id_by_email") for i in ("35", "37", "38", "54", "55")),
    *((i, "find_user_id_by_name_zip") for i in ("39", "67", "68")),
    *((i, "get_order_details") for i in ("46", "47")),
    *((i, "exchange_delivered_order_items") for i in ("64", "105")),
}
NO_OP_WRITES = {("110", "modify_user_address")}
"""Task 110 sets the default address to the address it already holds."""


@pytest.fixture(scope="module")
def folder() -> Any:
    return load_tau2_folder(TAU2_RETAIL, "retail")


def _env(**kwargs: Any) -> Any:
    return gym.make("papergym/ServiceAgent-v0", domain="retail", tau2_data=TAU2_RETAIL, **kwargs).unwrapped


def test_all_114_tasks_and_their_splits_load(folder: Any) -> None:
    assert len(folder.tasks) == 114
    assert (len(folder.splits["train"]), len(folder.splits["test"]), len(folder.splits["base"])) == (
        74,
        40,
        114,
    )
    task = folder.tasks["0"]
    assert task.instructions.known_info == "You are Yusuf Rossi in zip code 19122."
    assert task.criteria.reward_basis == ("DB", "NL_ASSERTION")
    assert [a.name for a in task.criteria.actions][-1] == "exchange_delivered_order_items"
    assert sum(bool(t.criteria.nl_assertions) for t in folder.tasks.values()) == 40


def test_every_gold_action_executes_and_every_gold_write_changes_the_db(folder: Any) -> None:
    errors, no_ops = set(), set()
    for task_id, task in folder.tasks.items():
        db = ServiceDB(folder.db)
        tools = RetailTools(db)
        for action in task.criteria.actions:
            before = db.fork()
            result = tools.call(action.name, action.arguments)
            assert not result.invalid, (task_id, action.name, result.text)  # every call fits the schemas
            if result.error:
                errors.add((task_id, action.name))
            elif action.name in RetailTools.WRITE and db.same_state(before):
                no_ops.add((task_id, action.name))
            elif action.name not in RetailTools.WRITE:
                assert db.same_state(before), (task_id, action.name)
    assert errors == EXPECTED_GOLD_ERRORS
    assert no_ops == NO_OP_WRITES


def _replayed(folder: Any, task_id: str) -> ServiceDB:
    return replay_gold(folder.tasks[task_id], RetailTools, folder.db)


def test_fields_after_the_gold_replay_equal_hand_checked_values(folder: Any) -> None:
    # Expected values computed by hand from db.json (item prices, balances) and the task's gold actions.
    db = _replayed(folder, "0")
    order = db.get("orders", "#W2378156")
    assert order["status"] == "exchange requested"
    assert order["exchange_items"] == ["1151293680", "4983901480"]
    assert order["exchange_new_items"] == ["7706410293", "7747408585"]
    assert order["exchange_price_difference"] == pytest.approx(
        (269.16 - 272.33) + (249.01 - 262.47)
    )  # -16.63
    assert order["exchange_payment_method_id"] == "credit_card_9513926"

    assert _replayed(folder, "1").get("orders", "#W2378156")["exchange_price_difference"] == pytest.approx(
        -13.46
    )

    order = _replayed(folder, "5").get("orders", "#W6390527")
    assert (order["status"], order["return_items"], order["return_payment_method_id"]) == (
        "return requested",
        ["8538875209"],
        "paypal_7644869",
    )

    db = _replayed(
        folder, "20"
    )  # four items, price difference 0.81 + 37.20 + 8.28 + 25.67 = 71.96 from a gift card
    order = db.get("orders", "#W9911714")
    user = db.get("users", order["user_id"])
    assert user["payment_methods"]["gift_card_4332117"]["balance"] == pytest.approx(86.0 - 71.96)
    assert order["payment_history"][-1]["transaction_type"] == "payment"
    assert order["payment_history"][-1]["amount"] == pytest.approx(71.96)
    assert order["status"] == "pending (item modified)"
    # tau2 writes the last new variant's price and options into every modified item
    assert [i["price"] for i in order["items"]] == [261.11] * 4

    db = _replayed(folder, "30")
    order = db.get("orders", "#W9373487")
    assert (order["status"], order["cancel_reason"]) == ("cancelled", "no longer needed")
    assert order["payment_history"][-1] == {
        "transaction_type": "refund",
        "amount": 109.27,
        "payment_method_id": "gift_card_7711863",
    }
    assert db.get("users", order["user_id"])["payment_methods"]["gift_card_7711863"][
        "balance"
    ] == pytest.approx(153.27)
    assert (
        db.get("orders", "#W2692684")["status"]
        == db.get("orders", "#W7449508")["status"]
        == "return requested"
    )

    db = _replayed(folder, "42")
    assert db.get("users", "mei_patel_7272")["address"]["address1"] == "445 Maple Drive"
    assert db.get("orders", "#W9583042")["address"]["city"] == "Fort Worth"
    order = db.get("orders", "#W4082615")
    assert order["payment_history"][-1]["transaction_type"] == "refund"
    assert order["payment_history"][-1]["amount"] == pytest.approx(54.11 - 46.13)
    assert order["items"][0]["item_id"] == "1096508426" and order["items"][0]["price"] == 46.13

    order = _replayed(folder, "60").get("orders", "#W5061109")
    assert order["payment_history"][-1]["amount"] == pytest.approx(13.75)
    assert order["items"][1]["options"]["battery life"] == "8 hours"

    db = _replayed(folder, "88")
    order = db.get("orders", "#W8835847")
    assert order["cancel_reason"] == "ordered by mistake"
    assert db.get("users", order["user_id"])["payment_methods"]["gift_card_2652153"][
        "balance"
    ] == pytest.approx(708.97)

    db = _replayed(folder, "100")
    order = db.get("orders", "#W3295833")
    assert order["payment_history"][-1]["amount"] == pytest.approx(47.01 + 21.91)
    assert order["payment_history"][-1]["payment_method_id"] == "credit_card_3261838"
    assert [i["price"] for i in order["items"][:2]] == [217.06, 217.06]
    assert db.get("orders", "#W8488728")["status"] == "return requested"


def _run_gold(env: Any, task_id: str, edit: Any = None) -> tuple[float, dict[str, Any]]:
    env.reset(options={"task_id": task_id})
    while True:
        action = env.oracle_action()
        action = edit(action) if edit is not None else action
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return reward, info


def test_the_gold_script_scores_one_on_every_task_and_nl_assertions_stay_unevaluated(folder: Any) -> None:
    env = _env()
    for task_id, task in folder.tasks.items():
        reward, info = _run_gold(env, task_id)
        assert reward == 1.0 and info[K.SUCCESS], (task_id, info)
        assert info[K.CHECKS]["db"] is True
        assert len(info[K.UNEVALUATED]) == len(task.criteria.nl_assertions)
        assert "nl_assertion" not in info[K.CHECKS]


def test_a_deliberately_wrong_write_fails_the_db_check() -> None:
    env = _env()

    def wrong(action: str) -> str:  # task 5 returns item 8538875209 of #W6390527: return another item instead
        return action.replace('"8538875209"', '"1615379700"')

    reward, info = _run_gold(env, "5", wrong)
    assert reward == 0.0 and info[K.CHECKS] == {"db": False} and info[K.SUCCESS] is False


def test_an_extra_write_fails_the_db_check() -> None:
    env = _env()
    extra = ToolCall("cancel_pending_order", {"order_id": "#W9373487", "reason": "no longer needed"}).format()
    env.reset(options={"task_id": "5"})
    env.step(extra)  # policy checks are off on tau2 data: the write goes through
    while True:
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            break
    assert reward == 0.0 and info[K.CHECKS] == {"db": False}


@pytest.mark.parametrize(("verdict", "passed"), [("1", True), ("0", False)])
def test_a_model_judge_scores_loaded_nl_assertions(folder: Any, verdict: str, passed: bool) -> None:
    task_id = next(i for i, t in folder.tasks.items() if t.criteria.nl_assertions)
    chat = ScriptedChat(verdict)
    env = _env(use_judge=True, judge=ModelJudge(chat, template=NL_JUDGE_TEMPLATE))
    reward, info = _run_gold(env, task_id)
    assert info[K.CHECKS]["nl_assertion"] is passed and info[K.UNEVALUATED] == []
    assert reward == float(passed) and info[K.SUCCESS] is passed
    assert len(chat.calls) == len(folder.tasks[task_id].criteria.nl_assertions)
    prompt = chat.calls[0]["messages"][-1]["content"]
    assert folder.tasks[task_id].criteria.nl_assertions[0] in prompt and "[tool_call]" in prompt


def test_tau2_splits_and_ids_are_reset_options() -> None:
    env = _env()
    assert env.splits == ("train", "test")
    _, info = env.reset(seed=0, options={"split": "test"})
    assert info[K.SPLIT] == "test"
    with pytest.raises(ValueError, match="unknown tau2 task id"):
        env.reset(options={"task_id": "no-such-task"})
