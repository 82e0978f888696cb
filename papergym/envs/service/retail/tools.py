"""The retail domain's tools: tau2-bench's names, arguments and semantics, over a `ServiceDB`.

Each write checks everything before it changes anything; the toolkit still runs each call inside a
journal mark, so even a failure midway leaves the database as it was. Results are the records as
JSON, as tau2's tools return them.
"""

from __future__ import annotations

import ast
import json
import operator
from collections.abc import Mapping
from typing import Any

from papergym.envs.service.domain import ToolError, Toolkit

_ORDER_ID = "The order id, such as '#W0000000'. Note the '#' at the start of the order id."
_PAYMENT_ID = (
    "such as 'gift_card_0000000' or 'credit_card_0000000'; look them up in the user or order details."
)
CANCEL_REASONS: tuple[str, ...] = ("no longer needed", "ordered by mistake")
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _address(address1: str, address2: str, city: str, state: str, country: str, zip: str) -> dict[str, str]:
    # tau2's UserAddress field order, so a written address serialises like a loaded one
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "country": country,
        "state": state,
        "zip": zip,
    }


def evaluate_arithmetic(expression: str) -> float:
    """The value of ``+ - * /`` arithmetic over numbers, read with ``ast`` (never ``eval``).

    Raises:
        ToolError: other characters, invalid syntax, or a division by zero.
    """
    if not expression or any(c not in "0123456789+-*/(). " for c in expression):
        raise ToolError("Invalid characters in expression")
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ToolError("Invalid expression") from exc

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            return _OPS[type(node.op)](value(node.left), value(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = value(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        raise ToolError("Invalid expression")

    try:
        return value(tree.body)
    except ZeroDivisionError as exc:
        raise ToolError("division by zero") from exc  # ZeroDivisionError's text, as tau2 shows it
    except (RecursionError, OverflowError) as exc:
        raise ToolError("Invalid expression") from exc


def _user_keys(user: dict[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    name = user["name"]
    return (
        ("email", user["email"].lower()),
        ("name_zip", name["first_name"].lower(), name["last_name"].lower(), user["address"]["zip"]),
    )


_INDEXES: dict[int, tuple[Any, dict[tuple[str, ...], list[str]]]] = {}


def _user_index(base: Any) -> dict[tuple[str, ...], list[str]]:
    """Lookup key -> user ids in database order, built once per base database (kept alive with it)."""
    entry = _INDEXES.get(id(base))
    if entry is None or entry[0] is not base:
        index: dict[tuple[str, ...], list[str]] = {}
        for user_id, user in base.get("users", {}).items():
            for key in _user_keys(user):
                index.setdefault(key, []).append(user_id)
        entry = _INDEXES[id(base)] = (base, index)
    return entry[1]


ORDER_FIELDS: tuple[str, ...] = (
    "order_id",
    "user_id",
    "address",
    "items",
    "status",
    "fulfillments",
    "payment_history",
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)
"""An order's fields in tau2's ``Order`` model order; tau2 shows the unset optional ones as null."""


def _order_view(order: Mapping[str, Any]) -> dict[str, Any]:
    """An order as tau2's tools return it: every field in model order, unset ones null."""
    view = {name: order.get(name) for name in ORDER_FIELDS}
    view.update((k, v) for k, v in order.items() if k not in view)
    return view


class RetailTools(Toolkit):
    """tau2's retail toolkit (users, orders, products, payment methods)."""

    READ = (
        "find_user_id_by_email",
        "find_user_id_by_name_zip",
        "get_order_details",
        "get_product_details",
        "get_item_details",
        "get_user_details",
        "list_all_product_types",
    )
    WRITE = (
        "cancel_pending_order",
        "exchange_delivered_order_items",
        "modify_pending_order_address",
        "modify_pending_order_items",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
    )
    GENERIC = ("calculate", "transfer_to_human_agents")

    # ------------------------------------------------------------------ lookups
    def _find_user(self, key: tuple[str, ...]) -> str | None:
        """The first user (in database order) whose email / name and zip give ``key``, as tau2's scan finds.

        An index over the shared base replaces the scan of every user; users written in this episode are
        checked against their current record.
        """
        index = _user_index(self.db.base)
        changed = self.db.overlay.get("users", {})
        hits = [u for u in index.get(key, ()) if u not in changed]
        hits += [
            u
            for u in changed
            if (record := self.db.get("users", u)) is not None and key in _user_keys(record)
        ]
        if not hits:
            return None
        if len(hits) == 1:
            return hits[0]
        order = {u: i for i, u in enumerate(self.db.keys("users"))}
        return min(hits, key=order.__getitem__)

    def _order(self, order_id: str, *, write: bool = False) -> dict[str, Any]:
        order = self.db.edit("orders", order_id) if write else self.db.get("orders", order_id)
        if order is None:
            raise ToolError("Order not found")
        return order

    def _user(self, user_id: str, *, write: bool = False) -> dict[str, Any]:
        user = self.db.edit("users", user_id) if write else self.db.get("users", user_id)
        if user is None:
            raise ToolError("User not found")
        return user

    def _payment(self, user_id: str, payment_method_id: str) -> dict[str, Any]:
        method = self._user(user_id)["payment_methods"].get(payment_method_id)
        if method is None:
            raise ToolError("Payment method not found")
        return method

    def _variant(self, product_id: str, item_id: str) -> dict[str, Any]:
        product = self.db.get("products", product_id)
        if product is None:
            raise ToolError("Product not found")
        variant = product["variants"].get(item_id)
        if variant is None:
            raise ToolError("Variant not found")
        return variant

    def _gift_card_balance(self, user_id: str, payment_method_id: str, delta: float) -> None:
        """Add ``delta`` to a gift card's balance (rounded to cents); other methods are untouched."""
        user = self._user(user_id)
        if user["payment_methods"][payment_method_id]["source"] != "gift_card":
            return
        card = self.db.edit("users", user_id)["payment_methods"][payment_method_id]
        self.db.set(card, "balance", round(card["balance"] + delta, 2))

    @staticmethod
    def _count_check(order: dict[str, Any], item_ids: list[str], message: str) -> None:
        present = [item["item_id"] for item in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > present.count(item_id):
                raise ToolError(message.format(item_id=item_id))

    def _price_difference(self, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str]) -> tuple:
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        diff = 0.0
        variant: dict[str, Any] = {}
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            item = next((i for i in order["items"] if i["item_id"] == item_id), None)
            if item is None:
                raise ToolError(f"Item {item_id} not found")
            variant = self._variant(item["product_id"], new_item_id)
            if not variant["available"]:
                raise ToolError(f"New item {new_item_id} not found or available")
            diff += variant["price"] - item["price"]
        return diff, variant

    # ------------------------------------------------------------------ generic
    def calculate(self, expression: str) -> str:
        """Calculate the result of a mathematical expression.

        Args:
            expression: The expression, such as '2 + 2': numbers, operators (+, -, *, /), parentheses and
                spaces.
        """
        return str(round(evaluate_arithmetic(expression), 2))

    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user
        explicitly asks for a human agent, or the request cannot be handled with the policy and the tools.

        Args:
            summary: A summary of the user's issue.
        """
        return "Transfer successful"

    # ------------------------------------------------------------------ reads
    def find_user_id_by_email(self, email: str) -> str:
        """Find the user id by email. Returns an error if no user has this email.

        Args:
            email: The user's email, such as 'something@example.com'.
        """
        user_id = self._find_user(("email", email.lower()))
        if user_id is not None:
            return user_id
        raise ToolError("User not found")

    def find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find the user id by first name, last name and zip code. Use this only if the user cannot be
        found by email or does not remember their email.

        Args:
            first_name: The user's first name, such as 'John'.
            last_name: The user's last name, such as 'Doe'.
            zip: The user's zip code, such as '12345'.
        """
        user_id = self._find_user(("name_zip", first_name.lower(), last_name.lower(), zip))
        if user_id is not None:
            return user_id
        raise ToolError("User not found")

    def get_order_details(self, order_id: str) -> dict[str, Any]:
        """Get the status and details of an order.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the start of the order id.
        """
        return _order_view(self._order(order_id))

    def get_product_details(self, product_id: str) -> str:
        """Get the inventory details of a product (all its variant items).

        Args:
            product_id: The product id, such as '6086499569'. Product ids and item ids are different.
        """
        text = self.encoded("products", product_id)  # 50 large read-only records: encoded once each
        if text is None:
            raise ToolError("Product not found")
        return text

    def get_item_details(self, item_id: str) -> dict[str, Any]:
        """Get the inventory details of an item.

        Args:
            item_id: The item id, such as '6086499569'. Item ids and product ids are different.
        """
        for product in self.db.values("products"):
            if item_id in product["variants"]:
                return product["variants"][item_id]
        raise ToolError("Item not found")

    def get_user_details(self, user_id: str) -> dict[str, Any]:
        """Get the details of a user, including their orders.

        Args:
            user_id: The user id, such as 'sara_doe_496'.
        """
        return self._user(user_id)

    def list_all_product_types(self) -> str:
        """List the name and product id of every product type, as a JSON object sorted by name."""
        return json.dumps({p["name"]: p["product_id"] for p in self.db.values("products")}, sort_keys=True)

    # ------------------------------------------------------------------ writes
    def cancel_pending_order(self, order_id: str, reason: str) -> dict[str, Any]:
        """Cancel a pending order. The agent must explain the cancellation and get explicit user confirmation
        (yes/no) first. The status becomes 'cancelled'; gift-card payments are refunded immediately,
        others in 5-7 business days.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the start of the order id.
            reason: The reason for cancellation: 'no longer needed' or 'ordered by mistake'.
        """
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be cancelled")
        if reason not in CANCEL_REASONS:
            raise ToolError("Invalid reason")
        for payment in order["payment_history"]:
            self._payment(order["user_id"], payment["payment_method_id"])
        order = self._order(order_id, write=True)
        refunds = [
            {"transaction_type": "refund", "amount": p["amount"], "payment_method_id": p["payment_method_id"]}
            for p in order["payment_history"]
        ]
        for refund in refunds:
            self._gift_card_balance(order["user_id"], refund["payment_method_id"], refund["amount"])
        self.db.set(order, "status", "cancelled")
        self.db.set(order, "cancel_reason", reason)
        for refund in refunds:
            self.db.append(order["payment_history"], refund)
        return _order_view(order)

    def exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Exchange items of a delivered order for new items of the same product. A delivered order can be
        returned or exchanged only once. The agent must explain the exchange and get explicit user
        confirmation (yes/no) first.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the start of the order id.
            item_ids: The item ids to exchange, each such as '1008292230'; duplicates allowed.
            new_item_ids: The item ids to exchange for, position by position, each of the same product.
            payment_method_id: The payment method that pays or receives the price difference, such as
                'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be exchanged")
        self._count_check(order, item_ids, "Number of {item_id} not found.")
        diff, _ = self._price_difference(order, item_ids, new_item_ids)
        diff = round(diff, 2)
        method = self._payment(order["user_id"], payment_method_id)
        if method["source"] == "gift_card" and method["balance"] < diff:
            raise ToolError("Insufficient gift card balance to pay for the price difference")
        order = self._order(order_id, write=True)
        self.db.set(order, "status", "exchange requested")
        self.db.set(order, "exchange_items", sorted(item_ids))
        self.db.set(order, "exchange_new_items", sorted(new_item_ids))
        self.db.set(order, "exchange_payment_method_id", payment_method_id)
        self.db.set(order, "exchange_price_difference", diff)
        return _order_view(order)

    def modify_pending_order_address(
        self, order_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Modify the shipping address of a pending order. The agent must explain the change and get explicit
        user confirmation (yes/no) first.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the start of the order id.
            address1: The first line of the address, such as '123 Main St'.
            address2: The second line of the address, such as 'Apt 1' or ''.
            city: The city, such as 'San Francisco'.
            state: The state, such as 'CA'.
            country: The country, such as 'USA'.
            zip: The zip code, such as '12345'.
        """
        if "pending" not in self._order(order_id)["status"]:
            raise ToolError("Non-pending order cannot be modified")
        order = self._order(order_id, write=True)
        self.db.set(order, "address", _address(address1, address2, city, state, country, zip))
        return _order_view(order)

    def modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Modify items of a pending order to other items of the same product. This can be done only once per
        order. The agent must explain the change and get explicit user confirmation (yes/no) first.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the start of the order id.
            item_ids: The item ids to modify, each such as '1008292230'; duplicates allowed.
            new_item_ids: The item ids to modify to, position by position, each of the same product.
            payment_method_id: The payment method that pays or receives the price difference, such as
                'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._order(order_id)
        if order["status"] != "pending":
            raise ToolError("Non-pending order cannot be modified")
        self._count_check(order, item_ids, "{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolError("The number of items to be exchanged should match")
        if any(a == b for a, b in zip(item_ids, new_item_ids, strict=True)):
            raise ToolError("The new item id should be different from the old item id")
        diff, variant = self._price_difference(order, item_ids, new_item_ids)
        method = self._payment(order["user_id"], payment_method_id)
        if method["source"] == "gift_card" and method["balance"] < diff:
            raise ToolError("Insufficient gift card balance to pay for the new item")
        order = self._order(order_id, write=True)
        self.db.append(
            order["payment_history"],
            {
                "transaction_type": "payment" if diff > 0 else "refund",
                "amount": abs(diff),
                "payment_method_id": payment_method_id,
            },
        )
        self._gift_card_balance(order["user_id"], payment_method_id, -diff)
        for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
            item = next(i for i in order["items"] if i["item_id"] == item_id)
            self.db.set(item, "item_id", new_item_id)
            # tau2 writes the price and options of the *last* new variant into every modified item;
            # kept as is so that its gold databases are reproduced exactly.
            self.db.set(item, "price", variant["price"])
            self.db.set(item, "options", dict(variant["options"]))
        self.db.set(order, "status", "pending (item modified)")
        return _order_view(order)

    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> dict[str, Any]:
        """Modify the payment method of a pending order. The agent must explain the change and get explicit
        user confirmation (yes/no) first.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the start of the order id.
            payment_method_id: The new payment method, such as 'gift_card_0000000' or 'credit_card_0000000'.
        """
        order = self._order(order_id)
        if "pending" not in order["status"]:
            raise ToolError("Non-pending order cannot be modified")
        method = self._payment(order["user_id"], payment_method_id)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ToolError("There should be exactly one payment for a pending order")
        old_id = history[0]["payment_method_id"]
        if old_id == payment_method_id:
            raise ToolError("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if method["source"] == "gift_card" and method["balance"] < amount:
            raise ToolError("Insufficient gift card balance to pay for the order")
        self._payment(order["user_id"], old_id)
        order = self._order(order_id, write=True)
        self.db.append(
            order["payment_history"],
            {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
        )
        self.db.append(
            order["payment_history"],
            {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
        )
        self._gift_card_balance(order["user_id"], payment_method_id, -amount)
        self._gift_card_balance(order["user_id"], old_id, amount)
        return _order_view(order)

    def modify_user_address(
        self, user_id: str, address1: str, address2: str, city: str, state: str, country: str, zip: str
    ) -> dict[str, Any]:
        """Modify the default address of a user. The agent must explain the change and get explicit user
        confirmation (yes/no) first.

        Args:
            user_id: The user id, such as 'sara_doe_496'.
            address1: The first line of the address, such as '123 Main St'.
            address2: The second line of the address, such as 'Apt 1' or ''.
            city: The city, such as 'San Francisco'.
            state: The state, such as 'CA'.
            country: The country, such as 'USA'.
            zip: The zip code, such as '12345'.
        """
        user = self._user(user_id, write=True)
        self.db.set(user, "address", _address(address1, address2, city, state, country, zip))
        return user

    def return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> dict[str, Any]:
        """Return items of a delivered order; the status becomes 'return requested' and the user gets an email
        on how to return them. The refund goes to the original payment method or an existing gift card. The
        agent must explain the return and get explicit user confirmation (yes/no) first.

        Args:
            order_id: The order id, such as '#W0000000'. Note the '#' at the start of the order id.
            item_ids: The item ids to return, each such as '1008292230'; duplicates allowed.
            payment_method_id: The payment method that receives the refund, such as 'gift_card_0000000' or
                'credit_card_0000000'.
        """
        order = self._order(order_id)
        if order["status"] != "delivered":
            raise ToolError("Non-delivered order cannot be returned")
        method = self._payment(order["user_id"], payment_method_id)
        if (
            method["source"] != "gift_card"
            and payment_method_id != order["payment_history"][0]["payment_method_id"]
        ):
            raise ToolError("Payment method should be the original payment method")
        self._count_check(order, item_ids, "Some item not found")
        order = self._order(order_id, write=True)
        self.db.set(order, "status", "return requested")
        self.db.set(order, "return_items", sorted(item_ids))
        self.db.set(order, "return_payment_method_id", payment_method_id)
        return _order_view(order)


__all__ = ["CANCEL_REASONS", "RetailTools", "evaluate_arithmetic"]
