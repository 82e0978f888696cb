"""The telecom database: a seeded generator in tau2's schema, and the reader of tau2's TOML files.

tau2 stores the carrier's database as ``db.toml`` (arrays of tables: ``[[customers]]``, ``[[lines]]``,
``[[plans]]``, ``[[devices]]``, ``[[bills]]``) and the user's phone as ``user_db.toml`` (``[device]``,
optionally ``[surroundings]``). `load_telecom_toml` turns them into papergym's tables keyed by id
(`papergym.envs.service.db.ServiceDB`'s shape), with the phone under ``device/phone`` and the
surroundings under ``surroundings/user``. Both databases hold their records in tau2's serialized form
(`papergym.envs.service.telecom.schema`), so tools show them as tau2 does.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from papergym.core.errors import DependencyNotInstalled
from papergym.envs.service.telecom.device import user_tables
from papergym.envs.service.telecom.schema import tau2_tables

N_CUSTOMERS = 150
"""Customers in the generated database (inferred; tau2's file has 4, its task generator builds more)."""
TEST_EVERY = 4
"""Every 4th customer is a test-split customer (inferred)."""
_KEYS = {
    "customers": "customer_id",
    "lines": "line_id",
    "plans": "plan_id",
    "devices": "device_id",
    "bills": "bill_id",
}
PLANS: tuple[dict[str, Any], ...] = (
    {
        "plan_id": "P1001",
        "name": "Starter",
        "data_limit_gb": 5.0,
        "price_per_month": 35.0,
        "data_refueling_price_per_gb": 5.0,
    },
    {
        "plan_id": "P1002",
        "name": "Plus",
        "data_limit_gb": 15.0,
        "price_per_month": 55.0,
        "data_refueling_price_per_gb": 2.5,
    },
    {
        "plan_id": "P1003",
        "name": "Max",
        "data_limit_gb": 50.0,
        "price_per_month": 80.0,
        "data_refueling_price_per_gb": 1.0,
    },
    {
        "plan_id": "P1004",
        "name": "Family",
        "data_limit_gb": 30.0,
        "price_per_month": 110.0,
        "data_refueling_price_per_gb": 3.0,
    },
)
_FIRST = (
    "Ava",
    "Liam",
    "Mia",
    "Noah",
    "Zoe",
    "Omar",
    "Ines",
    "Kenji",
    "Lena",
    "Raj",
    "Sara",
    "Tomas",
    "Yara",
    "Ivan",
    "Nadia",
    "Paulo",
    "Hana",
    "Eli",
    "Maya",
    "Jonas",
)
_LAST = (
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Tanaka",
    "Schmidt",
    "Alvarez",
    "Novak",
    "Haddad",
    "Kowalski",
    "Brennan",
    "Iyer",
    "Costa",
    "Fischer",
    "Nguyen",
    "Rossi",
    "Dubois",
    "Park",
    "Silva",
    "Berg",
    "Adeyemi",
)
_MODELS = ("Pixel 8", "Galaxy S24", "iPhone 15", "Moto G", "Xperia 10", "Nokia X30")
_CITIES = (
    ("Springfield", "IL", "62701"),
    ("Riverton", "WY", "82501"),
    ("Fairview", "OR", "97024"),
    ("Lakeside", "CA", "92040"),
    ("Greenville", "SC", "29601"),
)


def generate_telecom_db(seed: int, n_customers: int = N_CUSTOMERS) -> dict[str, Any]:
    """A telecom database in tau2's schema, drawn from ``seed`` only (every line Active, no roaming)."""
    rng = random.Random(seed)
    db: dict[str, Any] = {table: {} for table in _KEYS}
    db["plans"] = {p["plan_id"]: dict(p) for p in PLANS}
    line_no = device_no = bill_no = 1001
    for c in range(n_customers):
        customer_id = f"C{1001 + c}"
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        city, state, zip_code = rng.choice(_CITIES)
        line_ids, bill_ids = [], []
        for _ in range(rng.choice((1, 1, 2, 3))):
            plan = rng.choice(PLANS)
            line_id, device_id = f"L{line_no}", f"D{device_no}"
            line_no += 1
            device_no += 1
            db["devices"][device_id] = {
                "device_id": device_id,
                "device_type": "phone",
                "model": rng.choice(_MODELS),
                "imei": "".join(str(rng.randrange(10)) for _ in range(15)),
                "is_esim_capable": rng.random() < 0.7,
                "activated": True,
                "activation_date": f"2024-{rng.randrange(1, 13):02d}-{rng.randrange(1, 28):02d}T10:00:00",
            }
            db["lines"][line_id] = {
                "line_id": line_id,
                "phone_number": f"555-{200 + c:03d}-{line_no:04d}",
                "status": "Active",
                "plan_id": plan["plan_id"],
                "device_id": device_id,
                "data_used_gb": round(rng.uniform(0.1, 0.6) * plan["data_limit_gb"], 1),
                "data_refueling_gb": 0.0,
                "roaming_enabled": False,
                "contract_end_date": f"{rng.choice((2025, 2026, 2027))}-12-31",
                "last_plan_change_date": "2024-06-01",
            }
            line_ids.append(line_id)
        for month in (12, 1):
            bill_id = f"B{bill_no}"
            bill_no += 1
            year = 2024 if month == 12 else 2025
            items = [
                {
                    "description": f"{db['plans'][db['lines'][lid]['plan_id']]['name']} - Line "
                    f"{db['lines'][lid]['phone_number']}",
                    "amount": db["plans"][db["lines"][lid]["plan_id"]]["price_per_month"],
                    "date": f"{year}-{month:02d}-05",
                    "item_type": "Plan Charge",
                }
                for lid in line_ids
            ]
            db["bills"][bill_id] = {
                "bill_id": bill_id,
                "customer_id": customer_id,
                "period_start": f"{year}-{month:02d}-01",
                "period_end": f"{year}-{month:02d}-28",
                "issue_date": f"{year}-{month:02d}-05",
                "total_due": round(sum(i["amount"] for i in items), 2),
                "due_date": f"{year}-{month:02d}-19",
                "line_items": items,
                "status": "Paid",
            }
            bill_ids.append(bill_id)
        db["customers"][customer_id] = {
            "customer_id": customer_id,
            "full_name": f"{first} {last}",
            "date_of_birth": f"{rng.randrange(1950, 2004)}-{rng.randrange(1, 13):02d}-"
            f"{rng.randrange(1, 29):02d}",
            "email": f"{first.lower()}.{last.lower()}{c}@example.com",
            "phone_number": db["lines"][line_ids[0]]["phone_number"],
            "account_status": "Active",
            "created_at": "2023-05-01 09:00:00",
            "goodwill_credit_used_this_year": 0.0,
            "line_ids": line_ids,
            "bill_ids": bill_ids,
            "payment_methods": [
                {
                    "method_type": "Credit Card",
                    "account_number_last_4": f"{rng.randrange(10000):04d}",
                    "expiration_date": f"{rng.randrange(1, 13):02d}/2027",
                }
            ],
            "address": {
                "street": f"{rng.randrange(1, 999)} Main St",
                "city": city,
                "state": state,
                "zip_code": zip_code,
            },
        }
    return {**tau2_tables(db), **user_tables()}


@dataclass(frozen=True)
class TelecomWorld:
    """The generated database's customers by split (train: the others; test: every `TEST_EVERY`-th)."""

    db: Mapping[str, Any]
    customers: Mapping[str, tuple[str, ...]]

    @classmethod
    def build(cls, db: Mapping[str, Any]) -> TelecomWorld:
        ids = list(db["customers"])
        test = tuple(c for i, c in enumerate(ids) if i % TEST_EVERY == 0)
        train = tuple(c for i, c in enumerate(ids) if i % TEST_EVERY != 0)
        return cls(db, {"train": train, "test": test})

    def customer(self, customer_id: str) -> dict[str, Any]:
        return self.db["customers"][customer_id]

    def line(self, line_id: str) -> dict[str, Any]:
        return self.db["lines"][line_id]

    def plan(self, plan_id: str) -> dict[str, Any]:
        return self.db["plans"][plan_id]


def _keyed(records: list[Mapping[str, Any]], key: str) -> dict[str, Any]:
    return {str(r[key]): dict(r) for r in records}


def load_telecom_toml(folder: str | Path) -> dict[str, Any]:
    """The database of a tau2 telecom folder: ``db.toml`` (carrier) and ``user_db.toml`` (the phone).

    Raises:
        DependencyNotInstalled: Python < 3.11 (no ``tomllib``).
        ValueError: a record lacks its id.
    """
    try:
        import tomllib
    except ImportError as exc:  # Python 3.10
        raise DependencyNotInstalled("reading tau2's TOML files needs Python >= 3.11 (tomllib)") from exc
    path = Path(folder)
    with open(path / "db.toml", "rb") as f:
        carrier = tomllib.load(f)
    db: dict[str, Any] = {}
    for table, key in _KEYS.items():
        records = carrier.get(table, [])
        missing = [i for i, r in enumerate(records) if key not in r]
        if missing:
            raise ValueError(f"{path / 'db.toml'}: [[{table}]] entries {missing[:5]} lack {key!r}")
        db[table] = _keyed(records, key)
    db = tau2_tables(db)
    user: dict[str, Any] = {}
    if (path / "user_db.toml").is_file():
        with open(path / "user_db.toml", "rb") as f:
            user = tomllib.load(f)
    return {**db, **user_tables(user.get("device"), user.get("surroundings"))}
