"""The retail domain: tau2-bench's retail schema, tools and rules; a generated default database and tasks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from papergym.envs.service.db import ServiceDB
from papergym.envs.service.domain import Domain, Session, Template
from papergym.envs.service.retail.data import RetailWorld, generate_retail_db
from papergym.envs.service.retail.policy import RETAIL_POLICY
from papergym.envs.service.retail.templates import TEMPLATES
from papergym.envs.service.retail.tools import RetailTools

_AUTH_TOOLS = frozenset({"find_user_id_by_email", "find_user_id_by_name_zip"})


@dataclass
class RetailDomain(Domain):
    """tau2's retail domain (see `RetailTools` for the tools and `RETAIL_POLICY` for the rules).

    The policy guard refuses a write before the user is authenticated, and a write on another user's
    order or profile.
    """

    name: str = "retail"
    toolkit: type[RetailTools] = RetailTools
    policy: str = RETAIL_POLICY
    templates: tuple[Template, ...] = field(default=TEMPLATES)

    def generate_db(self, seed: int) -> dict[str, Any]:
        return generate_retail_db(seed)

    def world(self, db: Mapping[str, Any]) -> RetailWorld:
        return RetailWorld.build(db)

    def authenticate(self, name: str, result: Any) -> str | None:
        return result if name in _AUTH_TOOLS and isinstance(result, str) else None

    def guard(self, db: ServiceDB, session: Session, name: str, arguments: Mapping[str, Any]) -> str | None:
        if session.user_id is None:
            return (
                "Policy: authenticate the user (find their user id by email, or by name and zip code) "
                "before any change."
            )
        owner = arguments.get("user_id")
        if owner is None:
            order = db.get("orders", arguments.get("order_id", ""))
            owner = (
                order["user_id"] if order is not None else session.user_id
            )  # the tool reports a missing order
        if owner != session.user_id:
            return "Policy: you can only act for the authenticated user; this belongs to another user."
        return None
