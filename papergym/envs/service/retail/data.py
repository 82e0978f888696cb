"""A seeded retail database in tau2-bench's schema (products, users, orders), and its per-split indexes."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

N_USERS = 300
"""Users in the generated database (inferred; tau2's retail database has 500)."""
TEST_EVERY = 5
"""Every fifth user (by creation order) belongs to the test split, the rest to train."""

_OPTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "T-Shirt": {"color": ("blue", "red", "black", "white"), "size": ("S", "M", "L", "XL")},
    "Water Bottle": {"capacity": ("500ml", "750ml", "1000ml"), "color": ("blue", "green", "black")},
    "Office Chair": {"material": ("fabric", "leather", "mesh"), "color": ("black", "gray", "blue")},
    "Mechanical Keyboard": {
        "switch type": ("linear", "tactile", "clicky"),
        "backlight": ("none", "white", "RGB"),
    },
    "Smart Thermostat": {
        "compatibility": ("Apple HomeKit", "Google Assistant", "Amazon Alexa"),
        "color": ("white", "black"),
    },
    "Running Shoes": {"size": ("8", "9", "10", "11"), "color": ("black", "white", "red")},
    "Desk Lamp": {"color": ("black", "white", "silver"), "brightness": ("low", "medium", "high")},
    "Backpack": {"color": ("black", "grey", "navy"), "size": ("small", "medium", "large")},
    "Wireless Earbuds": {
        "color": ("black", "white", "blue"),
        "battery life": ("4 hours", "6 hours", "8 hours"),
    },
    "Coffee Maker": {
        "capacity": ("4 cups", "8 cups", "12 cups"),
        "type": ("drip", "espresso", "french press"),
    },
    "Hiking Boots": {"size": ("8", "9", "10", "11"), "material": ("leather", "synthetic")},
    "Yoga Mat": {"thickness": ("4mm", "6mm", "8mm"), "color": ("blue", "purple", "green")},
    "Laptop": {"screen size": ("13-inch", "15-inch"), "storage": ("256GB SSD", "512GB SSD", "1TB SSD")},
    "Tablet": {"screen size": ("8-inch", "10-inch"), "color": ("black", "silver", "gold")},
    "Smartphone Case": {"material": ("silicone", "leather", "plastic"), "color": ("black", "red", "clear")},
    "Bluetooth Speaker": {"color": ("black", "blue", "red"), "waterproof": ("yes", "no")},
    "Electric Kettle": {
        "capacity": ("1L", "1.5L", "2L"),
        "material": ("glass", "stainless steel", "plastic"),
    },
    "Air Purifier": {"room size": ("small", "medium", "large"), "filter type": ("HEPA", "carbon")},
    "Vacuum Cleaner": {"type": ("upright", "canister", "robotic"), "bagged/bagless": ("bagged", "bagless")},
    "Sunglasses": {"frame color": ("black", "brown", "silver"), "lens color": ("green", "brown", "blue")},
    "Wristwatch": {
        "strap material": ("leather", "metal", "silicone"),
        "dial color": ("black", "white", "blue"),
    },
    "Jigsaw Puzzle": {"pieces": ("500", "1000", "1500"), "theme": ("animals", "art", "landscape")},
    "Skateboard": {
        "deck material": ("maple", "bamboo", "plastic"),
        "length": ("28 inch", "31 inch", "34 inch"),
    },
    "Tea Kettle": {"material": ("glass", "ceramic", "stainless steel"), "capacity": ("1 liter", "2 liters")},
    "Cycling Helmet": {"size": ("S", "M", "L"), "color": ("black", "white", "red")},
    "Gaming Mouse": {
        "color": ("black", "white"),
        "sensor type": ("optical", "laser"),
        "connectivity": ("wired", "wireless"),
    },
    "Portable Charger": {
        "capacity": ("5000mAh", "10000mAh", "20000mAh"),
        "color": ("black", "white", "blue"),
    },
    "Digital Camera": {"resolution": ("20MP", "24MP", "30MP"), "zoom": ("3x", "5x", "10x")},
    "Headphones": {"type": ("on-ear", "over-ear", "in-ear"), "color": ("black", "white", "red")},
    "Garden Hose": {"length": ("25ft", "50ft", "100ft"), "material": ("rubber", "vinyl", "latex")},
    "Notebook": {"size": ("A4", "A5"), "cover type": ("hard cover", "soft cover")},
    "Pet Bed": {"size": ("small", "medium", "large"), "color": ("grey", "brown", "beige")},
    "Bookshelf": {"material": ("wood", "metal", "glass"), "height": ("3 ft", "5 ft", "6 ft")},
    "Action Camera": {"resolution": ("1080p", "4K", "5K"), "waterproof": ("yes", "no")},
    "Fleece Jacket": {"size": ("S", "M", "L", "XL"), "color": ("black", "navy", "red")},
    "Indoor Security Camera": {
        "resolution": ("1080p", "2K", "4K"),
        "field of view": ("110 degrees", "130 degrees"),
    },
    "Makeup Kit": {"skin tone": ("light", "medium", "dark"), "brand": ("Brand A", "Brand B", "Brand C")},
    "Perfume": {"scent family": ("woody", "fresh", "oriental"), "size": ("30ml", "50ml", "100ml")},
    "Espresso Machine": {"pressure": ("9 bar", "15 bar", "19 bar"), "capacity": ("1L", "1.5L", "2L")},
    "Grill": {"type": ("electric", "charcoal", "gas"), "size": ("portable", "medium", "full-size")},
    "Dumbbell Set": {
        "weight range": ("5-25 lbs", "30-50 lbs", "55-75 lbs"),
        "material": ("iron", "rubber", "urethane"),
    },
    "Cookware Set": {
        "material": ("stainless steel", "non-stick", "cast iron"),
        "piece count": ("8", "10", "12"),
    },
    "Electric Toothbrush": {
        "color": ("white", "black", "blue"),
        "battery type": ("rechargeable", "AA batteries"),
    },
    "Wall Clock": {"diameter": ("10 inches", "12 inches", "14 inches"), "color": ("black", "white", "wood")},
    "Luggage Set": {"piece count": ("2-piece", "3-piece", "4-piece"), "color": ("black", "blue", "red")},
    "Fleece Blanket": {"size": ("throw", "queen", "king"), "color": ("grey", "blue", "red")},
    "Bicycle": {"frame size": ("small", "medium", "large"), "type": ("road", "mountain", "city")},
    "Patio Umbrella": {"size": ("6 ft", "7 ft", "9 ft"), "color": ("red", "green", "blue")},
    "E-Reader": {
        "screen size": ("6-inch", "7-inch", "8-inch"),
        "connectivity": ("Wi-Fi", "Wi-Fi + Cellular"),
    },
    "Smart Watch": {"color": ("black", "silver", "gold"), "band": ("leather", "metal", "silicone")},
}
_FIRST = [
    "Noah",
    "Emma",
    "Liam",
    "Olivia",
    "Yusuf",
    "Sofia",
    "Mei",
    "Raj",
    "Aarav",
    "Fatima",
    "Ivan",
    "Lei",
    "Chen",
    "Yara",
    "Daiki",
    "Omar",
    "Isabella",
    "Lucas",
    "Amelia",
    "Ethan",
    "Mia",
    "James",
    "Ava",
    "Harper",
    "Mason",
    "Evelyn",
    "Anya",
    "Juan",
    "Sophia",
    "Ahmed",
    "Mohamed",
    "Priya",
    "Hiro",
    "Ingrid",
    "Kofi",
    "Nia",
    "Mateo",
]
_LAST = [
    "Brown",
    "Smith",
    "Rossi",
    "Garcia",
    "Kim",
    "Nguyen",
    "Li",
    "Khan",
    "Ito",
    "Silva",
    "Santos",
    "Muller",
    "Kovacs",
    "Wilson",
    "Moore",
    "Thomas",
    "Taylor",
    "Lee",
    "Hernandez",
    "Lopez",
    "Ahmed",
    "Johnson",
    "Anderson",
    "Gonzalez",
    "Martin",
    "Sanchez",
    "Patel",
    "Davis",
    "Clark",
    "Lewis",
]
_STREETS = (
    "Main Street",
    "Sunset Drive",
    "River Road",
    "Elm Avenue",
    "Oak Street",
    "Hillcrest Drive",
    "Lakeview Drive",
    "Park Avenue",
)
_CITIES = (
    ("Denver", "CO"),
    ("New York", "NY"),
    ("Austin", "TX"),
    ("Seattle", "WA"),
    ("Chicago", "IL"),
    ("Phoenix", "AZ"),
    ("Boston", "MA"),
    ("Columbus", "OH"),
    ("San Diego", "CA"),
    ("Charlotte", "NC"),
)
_BRANDS = ("visa", "mastercard", "amex", "discover")
STATUSES: tuple[str, ...] = ("pending", "processed", "delivered", "cancelled")


def _digits(rng: random.Random, n: int, used: set[str]) -> str:
    while True:
        value = str(rng.randrange(10 ** (n - 1), 10**n))
        if value not in used:
            used.add(value)
            return value


def random_address(rng: random.Random) -> dict[str, str]:
    """An address in tau2's field order."""
    city, state = rng.choice(_CITIES)
    return {
        "address1": f"{rng.randrange(10, 999)} {rng.choice(_STREETS)}",
        "address2": f"Suite {rng.randrange(100, 999)}" if rng.random() < 0.6 else "",
        "city": city,
        "country": "USA",
        "state": state,
        "zip": str(rng.randrange(10000, 99999)),
    }


def generate_retail_db(seed: int, n_users: int = N_USERS) -> dict[str, Any]:
    """The database: 50 products, ``n_users`` users with 1-3 payment methods and 1-5 orders each."""
    rng = random.Random(seed)
    used: set[str] = set()
    products: dict[str, Any] = {}
    for name, options in _OPTIONS.items():
        product_id = _digits(rng, 10, used)
        combos = [{}]
        for key, values in options.items():
            combos = [{**c, key: v} for c in combos for v in values]
        variants = {}
        base = rng.uniform(20, 600)
        for combo in rng.sample(combos, min(len(combos), rng.randrange(5, 10))):
            item_id = _digits(rng, 10, used)
            variants[item_id] = {
                "item_id": item_id,
                "options": combo,
                "available": rng.random() < 0.8,
                "price": round(base * rng.uniform(0.85, 1.15), 2),
            }
        products[product_id] = {"name": name, "product_id": product_id, "variants": variants}
    product_list = list(products.values())
    users: dict[str, Any] = {}
    orders: dict[str, Any] = {}
    emails: set[str] = set()
    for _ in range(n_users):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        user_id = f"{first.lower()}_{last.lower()}_{_digits(rng, 4, used)}"
        email = f"{first.lower()}.{last.lower()}{rng.randrange(1000, 9999)}@example.com"
        if email in emails:
            continue
        emails.add(email)
        methods: dict[str, Any] = {}
        for source in rng.sample(["credit_card", "paypal", "gift_card"], rng.randrange(1, 4)):
            method_id = f"{source}_{_digits(rng, 7, used)}"
            method: dict[str, Any] = {"source": source, "id": method_id}
            if source == "credit_card":
                method |= {"brand": rng.choice(_BRANDS), "last_four": f"{rng.randrange(10000):04d}"}
            elif source == "gift_card":
                method["balance"] = float(rng.randrange(0, 2000))
            methods[method_id] = method
        address = random_address(rng)
        user = {
            "user_id": user_id,
            "name": {"first_name": first, "last_name": last},
            "address": address,
            "email": email,
            "payment_methods": methods,
            "orders": [],
        }
        users[user_id] = user
        for _ in range(rng.randrange(1, 6)):
            order_id = f"#W{_digits(rng, 7, used)}"
            items = []
            for product in rng.sample(product_list, rng.randrange(1, 4)):
                variant = product["variants"][rng.choice(list(product["variants"]))]
                items.append(
                    {
                        "name": product["name"],
                        "product_id": product["product_id"],
                        "item_id": variant["item_id"],
                        "price": variant["price"],
                        "options": dict(variant["options"]),
                    }
                )
            status = rng.choice(STATUSES)
            payer = rng.choice(list(methods))
            total = round(sum(i["price"] for i in items), 2)
            history = [{"transaction_type": "payment", "amount": total, "payment_method_id": payer}]
            fulfillments = []
            if status in ("processed", "delivered"):
                fulfillments = [
                    {"tracking_id": [_digits(rng, 12, used)], "item_ids": [i["item_id"] for i in items]}
                ]
            order: dict[str, Any] = {
                "order_id": order_id,
                "user_id": user_id,
                "address": dict(address) if rng.random() < 0.7 else random_address(rng),
                "items": items,
                "status": status,
                "fulfillments": fulfillments,
                "payment_history": history,
            }
            if status == "cancelled":
                order["cancel_reason"] = rng.choice(["no longer needed", "ordered by mistake"])
                history.append({"transaction_type": "refund", "amount": total, "payment_method_id": payer})
            orders[order_id] = order
            user["orders"].append(order_id)
    return {"products": products, "users": users, "orders": orders}


@dataclass
class RetailWorld:
    """Indexes over a retail database for the task templates.

    Attributes:
        db: the database (read-only).
        users: split -> user ids.
        orders: (split, status) -> order ids of that split's users.
    """

    db: Mapping[str, Any]
    users: dict[str, list[str]] = field(default_factory=dict)
    orders: dict[tuple[str, str], list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, db: Mapping[str, Any]) -> RetailWorld:
        world = cls(db)
        for i, user_id in enumerate(db["users"]):
            split = "test" if i % TEST_EVERY == 0 else "train"
            world.users.setdefault(split, []).append(user_id)
            for order_id in db["users"][user_id]["orders"]:
                status = db["orders"][order_id]["status"]
                world.orders.setdefault((split, status), []).append(order_id)
        return world

    def only(self, user_id: str, split: str) -> RetailWorld:
        """A view of this world restricted to one user's orders (for a second request of the same user)."""
        view = RetailWorld(self.db, users={split: [user_id]})
        for order_id in self.db["users"][user_id]["orders"]:
            view.orders.setdefault((split, self.db["orders"][order_id]["status"]), []).append(order_id)
        return view

    def user(self, user_id: str) -> dict[str, Any]:
        return self.db["users"][user_id]

    def order(self, order_id: str) -> dict[str, Any]:
        return self.db["orders"][order_id]

    def product(self, product_id: str) -> dict[str, Any]:
        return self.db["products"][product_id]
