"""Telecom records in tau2's serialized form, so tool results read as tau2's do.

tau2 keeps its telecom database in pydantic models (``tau2/domains/telecom/data_model.py``) and shows a
record as the model's dump: every field in the model's order, an unset optional one as ``null``, numbers
of float fields as floats, a datetime as ``YYYY-MM-DD HH:MM:SS`` and a date as ``YYYY-MM-DD``.
`tau2_record` puts a record of papergym's tables in that form; the loaders apply it once, so the tools
return the stored records unchanged.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

REQUIRED = object()
"""A field without a default (kept as given)."""
ADDRESS = ("street", "city", "state", "zip_code")
PAYMENT_METHOD = ("method_type", "account_number_last_4", "expiration_date")
LINE_ITEM = ("description", "amount", "date", "item_type")
FIELDS: dict[str, tuple[tuple[str, Any], ...]] = {
    "customers": (
        ("customer_id", REQUIRED),
        ("full_name", REQUIRED),
        ("date_of_birth", REQUIRED),
        ("email", REQUIRED),
        ("phone_number", REQUIRED),
        ("address", REQUIRED),
        ("account_status", "Pending Verification"),
        ("payment_methods", ()),
        ("line_ids", ()),
        ("bill_ids", ()),
        ("created_at", "2025-01-01 00:00:00"),
        ("last_extension_date", None),
        ("goodwill_credit_used_this_year", 0.0),
    ),
    "lines": (
        ("line_id", REQUIRED),
        ("phone_number", REQUIRED),
        ("status", "Pending Activation"),
        ("plan_id", REQUIRED),
        ("device_id", None),
        ("data_used_gb", 0.0),
        ("data_refueling_gb", 0.0),
        ("roaming_enabled", False),
        ("contract_end_date", None),
        ("last_plan_change_date", None),
        ("last_sim_replacement_date", None),
        ("suspension_start_date", None),
    ),
    "plans": tuple(
        (name, REQUIRED)
        for name in ("plan_id", "name", "data_limit_gb", "price_per_month", "data_refueling_price_per_gb")
    ),
    "devices": (
        ("device_id", REQUIRED),
        ("device_type", REQUIRED),
        ("model", REQUIRED),
        ("imei", None),
        ("is_esim_capable", REQUIRED),
        ("activated", False),
        ("activation_date", None),
        ("last_esim_transfer_date", None),
    ),
    "bills": (
        ("bill_id", REQUIRED),
        ("customer_id", REQUIRED),
        ("period_start", REQUIRED),
        ("period_end", REQUIRED),
        ("issue_date", REQUIRED),
        ("total_due", REQUIRED),
        ("due_date", REQUIRED),
        ("line_items", ()),
        ("status", "Draft"),
    ),
}
"""Each table's fields in tau2's model order, with the model's default."""
FLOATS = frozenset(
    {
        "data_used_gb",
        "data_refueling_gb",
        "data_limit_gb",
        "price_per_month",
        "data_refueling_price_per_gb",
        "total_due",
        "amount",
        "goodwill_credit_used_this_year",
    }
)
"""tau2's float fields (an integer in a TOML file is shown as a float)."""
DATETIMES = frozenset({"created_at", "activation_date", "last_esim_transfer_date"})
"""tau2's datetime fields (the others holding dates are dates)."""


def _value(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in FLOATS and isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dt.datetime):
        return str(value) if name in DATETIMES else value.date().isoformat()
    if isinstance(value, dt.date):
        return str(dt.datetime.combine(value, dt.time())) if name in DATETIMES else value.isoformat()
    if name in DATETIMES and isinstance(value, str):
        return value.replace("T", " ")
    return value


def _ordered(record: Mapping[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {name: _value(name, record.get(name)) for name in names}


def tau2_record(table: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` of ``table`` as tau2 dumps it: tau2's fields in order, defaults filled in; papergym's
    extra fields (none in tau2's files) kept at the end."""
    out: dict[str, Any] = {}
    for name, default in FIELDS[table]:
        value = record.get(name, default)
        out[name] = list(value) if isinstance(value, tuple) else _value(name, value)
    if isinstance(out.get("address"), Mapping):
        out["address"] = _ordered(out["address"], ADDRESS)
    if "payment_methods" in out:
        out["payment_methods"] = [_ordered(p, PAYMENT_METHOD) for p in out["payment_methods"]]
    if "line_items" in out:
        out["line_items"] = [_ordered(i, LINE_ITEM) for i in out["line_items"]]
    out.update({k: v for k, v in record.items() if k not in out})
    return out


def tau2_tables(db: Mapping[str, Any]) -> dict[str, Any]:
    """``db`` with every record of the carrier's tables in tau2's form (other tables unchanged)."""
    return {
        table: ({key: tau2_record(table, r) for key, r in records.items()} if table in FIELDS else records)
        for table, records in db.items()
    }
