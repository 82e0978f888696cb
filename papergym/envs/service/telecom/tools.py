"""The telecom domain's agent tools: tau2-bench's names, arguments and semantics, over a `ServiceDB`.

Tables (tau2's ``db.toml`` lists, keyed by id): ``customers``, ``lines``, ``plans``, ``devices``,
``bills``. The user's own phone lives in the same database (tables ``device`` and ``surroundings``,
see `papergym.envs.service.telecom.device`), so that a line the agent resumes, roaming it enables or
data it refuels reach the phone directly, as tau2's ``sync_tools`` does after every turn.
"""

from __future__ import annotations

from typing import Any

from papergym.envs.service.domain import ToolError, Toolkit
from papergym.envs.service.telecom.device_setup import PhoneSetup

TODAY = "2025-02-25"
"""The fixed date of the generated world (inferred; tau2 uses the wall clock)."""
_ID_KINDS = {"C": "customers", "L": "lines", "D": "devices", "B": "bills", "P": "plans"}


class TelecomTools(PhoneSetup, Toolkit):
    """tau2's telecom toolkit: customers, lines, plans, bills and data usage; plus the user's device tools
    (in ``USER``, operated only by the user simulator) and tau2's initialization and assertion functions."""

    READ = (
        "get_customer_by_phone",
        "get_customer_by_id",
        "get_customer_by_name",
        "get_details_by_id",
        "get_bills_for_customer",
        "get_data_usage",
    )
    WRITE = (
        "suspend_line",
        "resume_line",
        "send_payment_request",
        "enable_roaming",
        "disable_roaming",
        "refuel_data",
    )
    GENERIC = ("transfer_to_human_agents",)
    HIDDEN = (*PhoneSetup.DEVICE_HIDDEN, "set_data_usage", "suspend_line_for_overdue_bill")
    ASSERTIONS = (
        *PhoneSetup.DEVICE_ASSERTIONS,
        "assert_data_refueling_amount",
        "assert_line_status",
        "assert_line_roaming",
        "assert_bill_status",
        "assert_no_overdue_bill",
    )

    # ------------------------------------------------------------------ lookups
    def _customer(self, customer_id: str) -> dict[str, Any]:
        customer = self.db.get("customers", customer_id)
        if customer is None:
            raise ToolError(f"Customer with ID {customer_id} not found")
        return customer

    def _line(self, line_id: str) -> dict[str, Any]:
        line = self.db.get("lines", line_id)
        if line is None:
            raise ToolError(f"Line with ID {line_id} not found")
        return line

    def _target_line(self, customer_id: str, line_id: str, *, edit: bool = False) -> dict[str, Any]:
        customer = self._customer(customer_id)
        if line_id not in customer["line_ids"]:
            raise ToolError(f"Line {line_id} not found for customer {customer_id}")
        self._line(line_id)
        return self.db.edit("lines", line_id) if edit else self._line(line_id)

    def _plan(self, plan_id: str) -> dict[str, Any]:
        plan = self.db.get("plans", plan_id)
        if plan is None:
            raise ToolError(f"Plan with ID {plan_id} not found")
        return plan

    def line_by_phone(self, phone_number: str) -> dict[str, Any] | None:
        """The line with ``phone_number`` (not a tool)."""
        return next((line for line in self.db.values("lines") if line["phone_number"] == phone_number), None)

    # ------------------------------------------------------------------ READ
    def get_customer_by_phone(self, phone_number: str) -> dict[str, Any]:
        """Finds a customer by their primary contact or line phone number.

        Args:
            phone_number: The phone number to search for.
        """
        for customer in self.db.values("customers"):
            if customer["phone_number"] == phone_number:
                return customer
            for line_id in customer["line_ids"]:
                line = self.db.get("lines", line_id)
                if line is not None and line["phone_number"] == phone_number:
                    return customer
        raise ToolError(f"Customer with phone number {phone_number} not found")

    def get_customer_by_id(self, customer_id: str) -> dict[str, Any]:
        """Retrieves a customer directly by their unique ID.

        Args:
            customer_id: The unique identifier of the customer.
        """
        return self._customer(customer_id)

    def get_customer_by_name(self, full_name: str, dob: str) -> list[dict[str, Any]]:
        """Searches for customers by name and DOB. May return multiple matches; the DOB disambiguates.

        Args:
            full_name: The full name of the customer.
            dob: Date of birth for verification, in the format YYYY-MM-DD.
        """
        name = full_name.lower()
        return [
            c
            for c in self.db.values("customers")
            if c["full_name"].lower() == name and c["date_of_birth"] == dob
        ]

    def get_details_by_id(self, id: str) -> dict[str, Any]:
        """Retrieves the details for a given ID: a Customer, Line, Device, Bill, or Plan ID.

        Args:
            id: The ID of the object to retrieve.
        """
        table = _ID_KINDS.get(id[:1])
        if table is None:
            raise ToolError(f"Unknown ID format or type: {id}")
        record = self.db.get(table, id)
        if record is None:
            raise ToolError(f"{table[:-1].capitalize()} with ID {id} not found")
        return record

    def get_bills_for_customer(self, customer_id: str, limit: int = 12) -> list[dict[str, Any]]:
        """Retrieves a list of the customer's bills, most recent first.

        Args:
            customer_id: ID of the customer.
            limit: Maximum number of bills to return.
        """
        customer = self._customer(customer_id)
        bills = [self.db.get("bills", b) for b in customer["bill_ids"]]
        bills = sorted((b for b in bills if b is not None), key=lambda b: b["issue_date"], reverse=True)
        return bills[: max(int(limit), 0)]

    def get_data_usage(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Retrieves current billing cycle data usage for a line: data used, refueled, limit, cycle end.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to check usage for.
        """
        line = self._target_line(customer_id, line_id)
        plan = self._plan(line["plan_id"])
        return {  # tau2 shows the numbers of a returned dict as strings
            "line_id": line_id,
            "data_used_gb": str(line["data_used_gb"]),
            "data_limit_gb": str(plan["data_limit_gb"]),
            "data_refueling_gb": str(line["data_refueling_gb"]),
            "cycle_end_date": "2025-02-28",
        }

    # ------------------------------------------------------------------ WRITE
    def suspend_line(self, customer_id: str, line_id: str, reason: str) -> dict[str, Any]:
        """Suspends a specific line (max 6 months). The line must be Active.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to suspend.
            reason: Reason for suspension.
        """
        line = self._target_line(customer_id, line_id)
        if line["status"] != "Active":
            raise ToolError("Line must be active to suspend")
        line = self._target_line(customer_id, line_id, edit=True)
        self.db.set(line, "status", "Suspended")
        self.db.set(line, "suspension_start_date", TODAY)
        return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line}

    def resume_line(self, customer_id: str, line_id: str) -> dict[str, Any]:
        """Resumes a suspended line. The line must be Suspended or Pending Activation.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to resume.
        """
        line = self._target_line(customer_id, line_id)
        if line["status"] not in ("Suspended", "Pending Activation"):
            raise ToolError("Line must be suspended to resume")
        line = self._target_line(customer_id, line_id, edit=True)
        self.db.set(line, "status", "Active")
        self.db.set(line, "suspension_start_date", None)
        return {"message": "Line resumed successfully", "line": line}

    def send_payment_request(self, customer_id: str, bill_id: str) -> str:
        """Sends a payment request to the customer for a specific bill (sets it to Awaiting Payment).

        This does not check whether the bill is already paid: check the bill status first.

        Args:
            customer_id: ID of the customer who owns the bill.
            bill_id: ID of the bill to send a payment request for.
        """
        customer = self._customer(customer_id)
        if any(
            (self.db.get("bills", b) or {}).get("status") == "Awaiting Payment" for b in customer["bill_ids"]
        ):
            raise ToolError("A bill is already awaiting payment for this customer")
        if bill_id not in customer["bill_ids"] or not self.db.has("bills", bill_id):
            raise ToolError(f"Bill {bill_id} not found for customer {customer_id}")
        self.db.set(self.db.edit("bills", bill_id), "status", "Awaiting Payment")
        return f"Payment request sent to the customer for bill {bill_id}"

    def _roaming(self, customer_id: str, line_id: str, on: bool) -> str:
        line = self._target_line(customer_id, line_id)
        word = "enabled" if on else "disabled"
        if bool(line["roaming_enabled"]) == on:
            return f"Roaming was already {word}"
        self.db.set(self._target_line(customer_id, line_id, edit=True), "roaming_enabled", on)
        return f"Roaming {word} successfully"

    def enable_roaming(self, customer_id: str, line_id: str) -> str:
        """Enables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to enable roaming for.
        """
        return self._roaming(customer_id, line_id, True)

    def disable_roaming(self, customer_id: str, line_id: str) -> str:
        """Disables international roaming on a line.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to disable roaming for.
        """
        return self._roaming(customer_id, line_id, False)

    def refuel_data(self, customer_id: str, line_id: str, gb_amount: float) -> dict[str, Any]:
        """Refuels data for a specific line, charging the plan's refueling rate to the customer's bill.

        Args:
            customer_id: ID of the customer who owns the line.
            line_id: ID of the line to refuel data for.
            gb_amount: Amount of data to add in gigabytes.
        """
        line = self._target_line(customer_id, line_id)
        gb_amount = float(gb_amount)
        if gb_amount <= 0:
            raise ToolError("Refuel amount must be positive")
        price = self._plan(line["plan_id"])["data_refueling_price_per_gb"]
        charge = gb_amount * price
        line = self._target_line(customer_id, line_id, edit=True)
        self.db.set(line, "data_refueling_gb", line["data_refueling_gb"] + gb_amount)
        self._charge(customer_id, charge, f"Data refueling: {gb_amount} GB at ${price}/GB")
        return {  # tau2 shows the numbers of a returned dict as strings
            "message": f"Successfully added {gb_amount} GB of data for line {line_id} for ${charge:.2f}",
            "new_data_refueling_gb": str(line["data_refueling_gb"]),
            "charge": str(charge),
        }

    def _charge(self, customer_id: str, amount: float, description: str) -> None:
        """Add a line item to the customer's draft bill (created as ``B<customer>D`` when absent)."""
        customer = self.db.edit("customers", customer_id)
        draft = next(
            (b for b in customer["bill_ids"] if (self.db.get("bills", b) or {}).get("status") == "Draft"),
            None,
        )
        if draft is None:
            draft = f"B{customer_id[1:]}D"
            self.db.insert(
                "bills",
                draft,
                {
                    "bill_id": draft,
                    "customer_id": customer_id,
                    "period_start": "2025-03-01",
                    "period_end": "2025-03-31",
                    "issue_date": "2025-03-01",
                    "total_due": 0.0,
                    "due_date": "2025-03-15",
                    "line_items": [],
                    "status": "Draft",
                },
            )
            self.db.append(customer["bill_ids"], draft)
        bill = self.db.edit("bills", draft)
        kind = "Credit" if amount < 0 else "Charge"
        self.db.append(
            bill["line_items"],
            {"description": description, "amount": amount, "date": TODAY, "item_type": kind},
        )
        self.db.set(bill, "total_due", bill["total_due"] + amount)

    def transfer_to_human_agents(self, summary: str) -> str:
        """Transfer the user to a human agent, with a summary of the user's issue. Only transfer if the user
        explicitly asks for a human agent, or if the policy and tools cannot solve the user's issue.

        Args:
            summary: A summary of the user's issue.
        """
        return "Transfer successful"

    # ------------------------------------------------------------------ initialization (tau2's, not tools)
    def set_data_usage(self, customer_id: str, line_id: str, data_used_gb: float) -> str:
        """Set a line's data usage (initialization only)."""
        self.db.set(self._target_line(customer_id, line_id, edit=True), "data_used_gb", data_used_gb)
        return f"Data usage set to {data_used_gb} GB for line {line_id}"

    def suspend_line_for_overdue_bill(
        self, customer_id: str, line_id: str, new_bill_id: str, contract_ended: bool
    ) -> str:
        """Add an overdue bill for the line's plan and suspend the line (initialization only)."""
        if self._line(line_id)["status"] != "Active":
            raise ToolError("Line must be active to suspend for unpaid bill")
        customer = self._customer(customer_id)
        if any((self.db.get("bills", b) or {}).get("status") == "Overdue" for b in customer["bill_ids"]):
            raise ToolError("Customer already has an overdue bill")
        line = self._target_line(customer_id, line_id, edit=True)
        plan = self._plan(line["plan_id"])
        customer = self.db.edit("customers", customer_id)
        amount = float(plan["price_per_month"])
        self.db.insert(
            "bills",
            new_bill_id,
            {
                "bill_id": new_bill_id,
                "customer_id": customer_id,
                "period_start": "2025-01-01",
                "period_end": "2025-01-31",
                "issue_date": "2025-01-01",
                "total_due": amount,
                "due_date": "2025-01-15",
                "line_items": [
                    {
                        "description": f"Charge for line {line_id}",
                        "amount": amount,
                        "date": TODAY,
                        "item_type": "Charge",
                    }
                ],
                "status": "Overdue",
            },
        )
        self.db.append(customer["bill_ids"], new_bill_id)
        self.db.set(line, "status", "Suspended")
        self.db.set(line, "suspension_start_date", TODAY)
        if contract_ended:
            self.db.set(line, "contract_end_date", "2025-01-31")
        return f"Line {line_id} suspended for the overdue bill {new_bill_id}"

    # ------------------------------------------------------------------ assertions
    def assert_data_refueling_amount(self, customer_id: str, line_id: str, expected_amount: float) -> bool:
        """The line's refueled data equals ``expected_amount`` GB."""
        return abs(self._target_line(customer_id, line_id)["data_refueling_gb"] - expected_amount) < 1e-6

    def assert_line_status(self, customer_id: str, line_id: str, expected_status: str) -> bool:
        """The line's status equals ``expected_status``."""
        return self._target_line(customer_id, line_id)["status"] == expected_status

    def assert_line_roaming(self, customer_id: str, line_id: str, expected_status: bool) -> bool:
        """The line's roaming flag equals ``expected_status`` (papergym)."""
        return bool(self._target_line(customer_id, line_id)["roaming_enabled"]) == expected_status

    def assert_bill_status(self, bill_id: str, expected_status: str) -> bool:
        """The bill's status equals ``expected_status`` (papergym)."""
        bill = self.db.get("bills", bill_id)
        return bill is not None and bill["status"] == expected_status

    def assert_no_overdue_bill(self, overdue_bill_id: str) -> bool:
        """The bill is paid, or not in the database (tau2's semantics)."""
        bill = self.db.get("bills", overdue_bill_id)
        return bill is None or bill["status"] == "Paid"
