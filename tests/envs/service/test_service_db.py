"""ServiceDB: copy-on-write records, the undo journal, forks, comparison and pickling."""

from __future__ import annotations

import copy
import pickle

import pytest

from papergym.envs.service.db import ServiceDB
from papergym.envs.service.domain import ToolError, Toolkit

BASE = {
    "users": {
        "u1": {"name": "Ann", "orders": ["#1"], "wallet": {"balance": 10.0}},
        "u2": {"name": "Bo", "orders": []},
    },
    "orders": {"#1": {"status": "pending", "items": [1, 2]}},
}


def test_writes_never_touch_the_shared_base() -> None:
    db = ServiceDB(BASE)
    user = db.edit("users", "u1")
    db.set(user["wallet"], "balance", 99.0)
    db.append(user["orders"], "#2")
    db.insert("orders", "#2", {"status": "pending", "items": []})
    db.remove("users", "u2")
    assert BASE["users"]["u1"] == {"name": "Ann", "orders": ["#1"], "wallet": {"balance": 10.0}}
    assert db.get("users", "u1")["wallet"]["balance"] == 99.0
    assert list(db.keys("users")) == ["u1"] and list(db.keys("orders")) == ["#1", "#2"]
    assert db.touched() == {("users", "u1"), ("users", "u2"), ("orders", "#2")}


@pytest.mark.parametrize("op", ["set", "delete", "append", "replace", "insert", "remove", "edit"])
def test_rollback_restores_the_exact_state_after_each_kind_of_write(op: str) -> None:
    db = ServiceDB(BASE)
    db.set(db.edit("orders", "#1"), "status", "processed")  # an earlier, committed write
    db.commit()
    before = db.to_dict()
    mark = db.begin()
    order = db.edit("orders", "#1")
    user = db.edit("users", "u1")
    {
        "set": lambda: db.set(order, "status", "cancelled"),
        "delete": lambda: db.delete(order, "status"),
        "append": lambda: db.append(order["items"], 3),
        "replace": lambda: db.replace(order["items"], 0, 7),
        "insert": lambda: db.insert("orders", "#9", {"status": "new"}),
        "remove": lambda: db.remove("users", "u2"),
        "edit": lambda: db.set(user, "name", "Zed"),
    }[op]()
    assert db.to_dict() != before
    db.rollback(mark)
    assert db.to_dict() == before
    assert db.get("orders", "#1")["status"] == "processed"


def test_a_failing_tool_call_is_rolled_back_by_the_toolkit() -> None:
    class Faulty(Toolkit):
        WRITE = ("half_write",)

        def half_write(self, user_id: str) -> str:
            """Writes, then fails.

            Args:
                user_id: the user.
            """
            user = self.db.edit("users", user_id)
            self.db.set(user, "name", "changed")
            self.db.append(user["orders"], "#x")
            raise ToolError("failed after writing")

    db = ServiceDB(BASE)
    result = Faulty(db).call("half_write", {"user_id": "u1"})
    assert result.error and result.text == "Error: failed after writing"
    assert db.get("users", "u1") == BASE["users"]["u1"]
    assert Faulty(db).call("half_write", {"user": "u1"}).invalid  # schema-checked argument names


def test_same_state_sees_every_difference_and_ignores_untouched_records() -> None:
    a, b = ServiceDB(BASE), ServiceDB(BASE)
    assert a.same_state(b)
    a.set(a.edit("orders", "#1"), "status", "cancelled")
    assert not a.same_state(b) and not b.same_state(a)
    b.set(b.edit("orders", "#1"), "status", "cancelled")
    assert a.same_state(b)
    b.edit("users", "u2")  # copied but unchanged: still equal
    assert a.same_state(b)


def test_forks_deep_copies_and_pickles_are_independent_and_share_the_base() -> None:
    db = ServiceDB(BASE)
    db.set(db.edit("orders", "#1"), "status", "cancelled")
    db.remove("users", "u2")
    for clone in (db.fork(), copy.deepcopy(db), pickle.loads(pickle.dumps(db))):
        assert clone.to_dict() == db.to_dict()
        clone.set(clone.edit("orders", "#1"), "status", "pending")
        assert db.get("orders", "#1")["status"] == "cancelled"
    assert db.fork().base is BASE and copy.deepcopy(db).base is BASE


def test_encoded_records_are_cached_for_the_base_and_fresh_after_a_write() -> None:
    import json

    db = ServiceDB(BASE)
    tools = Toolkit(db)
    text = tools.encoded("orders", "#1")
    assert json.loads(text) == BASE["orders"]["#1"] and tools.encoded("orders", "#1") is text
    db.set(db.edit("orders", "#1"), "status", "cancelled")
    assert json.loads(tools.encoded("orders", "#1"))["status"] == "cancelled"
    assert json.loads(Toolkit(ServiceDB(BASE)).encoded("orders", "#1"))["status"] == "pending"
    assert tools.encoded("orders", "#404") is None


def test_random_write_sequences_roll_back_exactly() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    ops = st.lists(
        st.tuples(
            st.sampled_from(["set", "delete", "append", "replace", "insert", "remove"]),
            st.sampled_from([("users", "u1"), ("users", "u2"), ("orders", "#1"), ("orders", "#7")]),
            st.integers(0, 3),
        ),
        max_size=12,
    )

    @settings(max_examples=150, deadline=None)
    @given(ops, ops)
    def check(
        committed: list[tuple[str, tuple[str, str], int]], undone: list[tuple[str, tuple[str, str], int]]
    ) -> None:
        db = ServiceDB(BASE)
        apply(db, committed)
        db.commit()
        before = db.to_dict()
        mark = db.begin()
        apply(db, undone)
        db.rollback(mark)
        assert db.to_dict() == before
        assert BASE["users"]["u1"]["wallet"] == {"balance": 10.0} and BASE["orders"]["#1"]["items"] == [1, 2]

    def apply(db: ServiceDB, steps: list[tuple[str, tuple[str, str], int]]) -> None:
        for op, (table, key), n in steps:
            if op == "insert":
                db.insert(table, key, {"status": f"new{n}", "items": [n]})
                continue
            if op == "remove":
                db.remove(table, key)
                continue
            record = db.edit(table, key)
            if record is None:
                continue
            if op == "set":
                db.set(record, "status", f"s{n}")
            elif op == "delete":
                db.delete(record, "status")
            else:
                items = record.get("items", record.get("orders"))
                if items is None:
                    continue
                if op == "append":
                    db.append(items, n)
                elif items:
                    db.replace(items, n % len(items), n + 100)

    check()
