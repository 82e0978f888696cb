"""Contacts, expense and recipe templates, including the Markor-to-app transcription tasks."""

from __future__ import annotations

import random
from typing import Any

from papergym.envs.mobile_gui.apps.base import fid
from papergym.envs.mobile_gui.apps.messaging import digits
from papergym.envs.mobile_gui.oracle import Fill, Finish, OpenApp, Press, Read, Scan, Seq, Step, Tap, texts
from papergym.envs.mobile_gui.phone import PhoneState
from papergym.envs.mobile_gui.templates.base import Params, Template, register
from papergym.envs.mobile_gui.templates.common import (
    Branch,
    add_record,
    delete_row,
    duplicate_extras,
    has_record,
    no_duplicates_and_all_kept,
    row_starting,
)
from papergym.envs.mobile_gui.views import Screen
from papergym.envs.mobile_gui.world import (
    EXPENSE_NAMES,
    FIRST,
    INGREDIENTS,
    LAST,
    RECIPE_TITLES,
    phone_number,
    random_expense,
    random_recipe,
)

EXPENSE_KEYS = ("name", "amount", "category", "note")
RECIPE_KEYS = ("title", "description", "servings", "prep_time", "ingredients", "directions")


class AddContact(Template):
    name, optimal_steps, apps = "ContactsAddContact", 5, ("contacts",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        taken = {(c["first"], c["last"]) for c in state.records("contacts")}
        first, last = rng.choice([(f, ln) for f in FIRST for ln in LAST if (f, ln) not in taken])
        return {"first": first, "last": last, "number": phone_number(rng)}

    def goal(self, p: Params) -> str:
        return f"Create a new contact for {p['first']} {p['last']}. Their number is {p['number']}."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return any(
            (c["first"], c["last"]) == (p["first"], p["last"]) and digits(c["phone"]) == digits(p["number"])
            for c in state.records("contacts")
        )

    def creates(self, p: Params) -> dict[str, int]:
        return {"contacts": 1}

    def evidence(self, p: Params) -> list[str]:
        return [f"{p['first']} {p['last']}"]

    def plan(self, p: Params) -> Step:
        values = {"first": p["first"], "last": p["last"], "phone": p["number"]}
        return Seq(OpenApp("Contacts"), add_record(values), Finish())


class NewContactDraft(Template):
    name, optimal_steps, apps = "ContactsNewContactDraft", 6, ("contacts",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        return {
            "first": rng.choice(FIRST),
            "last": rng.choice(LAST),
            "phone": phone_number(rng),
            "phone_label": rng.choice(("Home", "Work", "Other")),
        }

    def goal(self, p: Params) -> str:
        return (
            f"Go to the new contact screen and enter the following details: First Name: {p['first']}, "
            f"Last Name: {p['last']}, Phone: {p['phone']}, Phone Label: {p['phone_label']}. "
            "Do NOT hit save."
        )

    def _ok(self, values: dict[str, str], p: Params) -> bool:
        return all(values.get(fid(k), "") == p[k] for k in ("first", "last", "phone", "phone_label"))

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        top = state.top
        return top.app == "contacts" and top.screen == "form" and top.arg is None and self._ok(top.draft, p)

    def screen_check(self, p: Params, screen: Screen, answer: str | None) -> bool:
        return self._ok({e.id: e.text for e in screen.elements if e.editable}, p)

    def plan(self, p: Params) -> Step:
        fills = [Fill(fid(k), p[k]) for k in ("first", "last", "phone", "phone_label")]
        return Seq(OpenApp("Contacts"), Tap("add"), *fills, Finish())


def _expense_text(e: dict[str, Any]) -> str:
    return f"{e['name']}, amount {e['amount']}, category {e['category']}, note '{e['note']}'"


class AddExpenses(Template):
    apps = ("expenses",)

    def __init__(self, name: str, n: int, optimal_steps: int) -> None:
        self.name, self.n, self.optimal_steps = name, n, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        used = {e["name"] for e in state.records("expenses")}
        names = rng.sample([n for n in EXPENSE_NAMES if n not in used], self.n)
        return {
            "expenses": [random_expense(rng, n, note=rng.choice(("gift", "weekly", "trip"))) for n in names]
        }

    def goal(self, p: Params) -> str:
        return "Add the following expenses into the arduia pro expense: " + "; ".join(
            map(_expense_text, p["expenses"])
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return all(has_record(state, "expenses", e) for e in p["expenses"])

    def creates(self, p: Params) -> dict[str, int]:
        return {"expenses": len(p["expenses"])}

    def evidence(self, p: Params) -> list[str]:
        return [e["name"] for e in p["expenses"]][-1:]

    def plan(self, p: Params) -> Step:
        adds = [add_record({k: e[k] for k in EXPENSE_KEYS}) for e in p["expenses"]]
        return Seq(OpenApp("Pro Expense"), *adds, Finish())


class DeleteExpenses(Template):
    edits_existing = True  # it deletes, edits or moves records present at reset
    apps = ("expenses",)

    def __init__(self, name: str, n: int, noise: int, optimal_steps: int) -> None:
        self.name, self.n, self.noise, self.optimal_steps = name, n, noise, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        used = {e["name"] for e in state.records("expenses")}
        for n in rng.sample([n for n in EXPENSE_NAMES if n not in used], self.noise):
            state.add("expenses", random_expense(rng, n))
        targets = rng.sample([e["name"] for e in state.records("expenses")], self.n)
        return {"names": targets, "n0": len(state.records("expenses"))}

    def goal(self, p: Params) -> str:
        return f"Delete the following expenses from arduia pro expense: {', '.join(p['names'])}."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        names = [e["name"] for e in state.records("expenses")]
        return not set(p["names"]) & set(names) and len(names) == p["n0"] - self.n

    def absent(self, p: Params) -> list[str]:
        return [f"{n} ·" for n in p["names"]]

    def plan(self, p: Params) -> Step:
        return Seq(OpenApp("Pro Expense"), *(delete_row(row_starting(n), n) for n in p["names"]), Finish())


class DeleteDuplicates(Template):
    """Exact duplicates, read off the list rows (each row shows every field)."""

    edits_existing = True  # it deletes, edits or moves records present at reset

    def __init__(
        self,
        name: str,
        collection: str,
        label: str,
        keys: tuple[str, ...],
        n_dup: int,
        noise: int,
        optimal_steps: int,
    ) -> None:
        self.name, self.collection, self.label, self.keys = name, collection, label, keys
        self.n_dup, self.noise, self.optimal_steps = n_dup, noise, optimal_steps
        self.apps = (collection,)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        recs = state.records(self.collection)
        pool = EXPENSE_NAMES if self.collection == "expenses" else RECIPE_TITLES
        used = {r[self.keys[0]] for r in recs}
        make = random_expense if self.collection == "expenses" else random_recipe
        for n in rng.sample([n for n in pool if n not in used], self.noise):
            state.add(self.collection, make(rng, n))
        for r in rng.sample(list(recs), self.n_dup):
            state.add(self.collection, {k: v for k, v in r.items() if k != "id"})
        originals = sorted({tuple(str(r[k]).strip().lower() for k in self.keys) for r in recs})
        return {"originals": [list(o) for o in originals]}

    def goal(self, p: Params) -> str:
        app = "arduia pro expense" if self.collection == "expenses" else "the Broccoli app"
        return (
            "Delete all but one of any "
            f"{'expenses' if self.collection == 'expenses' else 'recipes'} in {app} "
            "that are exact duplicates, ensuring at least one instance of each unique "
            f"{'expense' if self.collection == 'expenses' else 'recipe'} remains"
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return no_duplicates_and_all_kept(state, self.collection, self.keys, p["originals"])

    def plan(self, p: Params) -> Step:
        def deletes(mem: dict[str, Any]) -> list[Step]:
            return [delete_row(rid) for rid in duplicate_extras(mem.get("rows", {}))]

        return Seq(OpenApp(self.label), Scan("rows"), Seq(dynamic=deletes), Finish())


def _recipe_text(r: dict[str, Any]) -> str:
    return " | ".join(str(r[k]) for k in RECIPE_KEYS)


class AddRecipes(Template):
    apps = ("recipes",)

    def __init__(self, name: str, n: int, optimal_steps: int) -> None:
        self.name, self.n, self.optimal_steps = name, n, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        used = {r["title"] for r in state.records("recipes")}
        titles = rng.sample([t for t in RECIPE_TITLES if t not in used], self.n)
        return {"recipes": [random_recipe(rng, t) for t in titles]}

    def goal(self, p: Params) -> str:
        lines = [", ".join(f"{k.replace('_', ' ')}: {r[k]}" for k in RECIPE_KEYS) for r in p["recipes"]]
        return "Add the following recipes into the Broccoli app:\n" + "\n".join(lines)

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return all(has_record(state, "recipes", r) for r in p["recipes"])

    def creates(self, p: Params) -> dict[str, int]:
        return {"recipes": len(p["recipes"])}

    def evidence(self, p: Params) -> list[str]:
        return [r["title"] for r in p["recipes"]][-1:]

    def plan(self, p: Params) -> Step:
        adds = [add_record({k: r[k] for k in RECIPE_KEYS}) for r in p["recipes"]]
        return Seq(OpenApp("Broccoli"), *adds, Finish())


class DeleteRecipes(Template):
    edits_existing = True  # it deletes, edits or moves records present at reset
    apps = ("recipes",)

    def __init__(self, name: str, n: int, noise: int, optimal_steps: int) -> None:
        self.name, self.n, self.noise, self.optimal_steps = name, n, noise, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        used = {r["title"] for r in state.records("recipes")}
        for t in rng.sample([t for t in RECIPE_TITLES if t not in used], self.noise):
            state.add("recipes", random_recipe(rng, t))
        return {
            "titles": rng.sample([r["title"] for r in state.records("recipes")], self.n),
            "n0": len(state.records("recipes")),
        }

    def goal(self, p: Params) -> str:
        return f"Delete the following recipes from Broccoli app: {', '.join(p['titles'])}."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        titles = [r["title"] for r in state.records("recipes")]
        return not set(p["titles"]) & set(titles) and len(titles) == p["n0"] - self.n

    def absent(self, p: Params) -> list[str]:
        return [f"{t} ·" for t in p["titles"]]

    def plan(self, p: Params) -> Step:
        return Seq(OpenApp("Broccoli"), *(delete_row(row_starting(t), t) for t in p["titles"]), Finish())


class DeleteRecipesWithIngredient(Template):
    """Open each recipe, read its directions, delete it when they use the ingredient."""

    edits_existing = True  # it deletes, edits or moves records present at reset

    name, optimal_steps, apps = "RecipeDeleteMultipleRecipesWithConstraint", 20, ("recipes",)

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        ingredient = rng.choice(INGREDIENTS)
        recs = state.records("recipes")
        for r in recs:
            if ingredient in r["directions"]:
                r["directions"] = "Mix everything. Bake for 20 minutes."
        for r in rng.sample(recs, 2):
            r["directions"] = f"Slice the {ingredient} thinly. Cook gently. Serve."
        keep = [r["title"] for r in recs if ingredient not in r["directions"]]
        gone = [r["title"] for r in recs if ingredient in r["directions"]]
        return {"ingredient": ingredient, "keep": keep, "gone": gone}

    def goal(self, p: Params) -> str:
        return f"Delete the recipes from Broccoli app that use {p['ingredient']} in the directions."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        return sorted(r["title"] for r in state.records("recipes")) == sorted(p["keep"])

    def absent(self, p: Params) -> list[str]:
        return [f"{t} ·" for t in p["gone"]]

    def plan(self, p: Params) -> Step:
        want = p["ingredient"]

        def visits(mem: dict[str, Any]) -> list[Step]:
            out: list[Step] = []
            for rid in sorted(mem.get("rows", {}), key=lambda r: int(r.split("_")[1])):
                key = f"dir_{rid}"
                out.append(
                    Seq(
                        Tap(rid),
                        Read(key, lambda s: " ".join(texts(s, "detail_directions"))),
                        Branch(
                            lambda m, k=key: want in m[k], Seq(Tap("delete"), Tap("confirm")), Press("back")
                        ),
                    )
                )
            return out

        return Seq(OpenApp("Broccoli"), Scan("rows"), Seq(dynamic=visits), Finish())


def _markor_lines(screen: Screen) -> list[str]:
    return texts(screen, "detail_line")


class ExpensesFromMarkor(Template):
    name, optimal_steps, apps = "ExpenseAddMultipleFromMarkor", 15, ("markor", "expenses")

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        used = {e["name"] for e in state.records("expenses")}
        rows = [random_expense(rng, n) for n in rng.sample([n for n in EXPENSE_NAMES if n not in used], 4)]
        flags = rng.sample([True, True, False, False], 4)
        lines = [
            f"{e['name']}, {e['amount']}, {e['category']}, {'reimbursable' if f else 'personal'}"
            for e, f in zip(rows, flags, strict=True)
        ]
        state.add(
            "notes", {"name": "my_expenses.txt", "content": "\n".join(lines), "folder": "", "modified": 99}
        )
        return {
            "add": [
                {k: e[k] for k in ("name", "amount", "category")}
                for e, f in zip(rows, flags, strict=True)
                if f
            ],
            "skip": [e["name"] for e, f in zip(rows, flags, strict=True) if not f],
        }

    def goal(self, p: Params) -> str:
        return (
            "Go through the transactions in my_expenses.txt in Markor. Log the reimbursable transactions in "
            "the arduia pro expense."
        )

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        names = {e["name"] for e in state.records("expenses")}
        return all(has_record(state, "expenses", e) for e in p["add"]) and not names & set(p["skip"])

    def creates(self, p: Params) -> dict[str, int]:
        return {"expenses": len(p["add"])}

    def evidence(self, p: Params) -> list[str]:
        return [e["name"] for e in p["add"]][-1:]

    def plan(self, p: Params) -> Step:
        def adds(mem: dict[str, Any]) -> list[Step]:
            out: list[Step] = []
            for line in mem.get("lines", {}).values():
                parts = [x.strip() for x in line.split(",")]
                if len(parts) == 4 and parts[3] == "reimbursable":
                    out.append(add_record({"name": parts[0], "amount": parts[1], "category": parts[2]}))
            return out

        return Seq(
            OpenApp("Markor"),
            Tap(row_starting("my_expenses.txt")),
            Scan("lines", "detail_line"),
            OpenApp("Pro Expense"),
            Seq(dynamic=adds),
            Finish(),
        )


class RecipesFromMarkor(Template):
    apps = ("markor", "recipes")

    def __init__(self, name: str, by_prep: bool, optimal_steps: int) -> None:
        self.name, self.by_prep, self.optimal_steps = name, by_prep, optimal_steps

    def setup(self, rng: random.Random, state: PhoneState) -> Params:
        used = {r["title"] for r in state.records("recipes")}
        titles = rng.sample([t for t in RECIPE_TITLES if t not in used], 3)
        recipes = [random_recipe(rng, t) for t in titles]
        prep = recipes[0]["prep_time"]
        if self.by_prep:
            recipes[1]["prep_time"] = prep
            recipes[2]["prep_time"] = "90 mins"
        lines = [_recipe_text(r) for r in recipes]
        state.add("notes", {"name": "recipes.txt", "content": "\n".join(lines), "folder": "", "modified": 99})
        chosen = [r for r in recipes if not self.by_prep or r["prep_time"] == prep]
        return {
            "prep_time": prep,
            "add": [{k: r[k] for k in RECIPE_KEYS} for r in chosen],
            "skip": [r["title"] for r in recipes if r not in chosen],
        }

    def goal(self, p: Params) -> str:
        if self.by_prep:
            return (
                f"Add the recipes from recipes.txt in Markor that take {p['prep_time']} to prepare into the "
                "Broccoli recipe app."
            )
        return "Add the recipes from recipes.txt in Markor to the Broccoli recipe app."

    def check(self, p: Params, state: PhoneState, answer: str | None) -> bool:
        titles = {r["title"] for r in state.records("recipes")}
        return all(has_record(state, "recipes", r) for r in p["add"]) and not titles & set(p["skip"])

    def creates(self, p: Params) -> dict[str, int]:
        return {"recipes": len(p["add"])}

    def evidence(self, p: Params) -> list[str]:
        return [r["title"] for r in p["add"]][-1:]

    def plan(self, p: Params) -> Step:
        prep = p["prep_time"] if self.by_prep else None

        def adds(mem: dict[str, Any]) -> list[Step]:
            out: list[Step] = []
            for line in mem.get("lines", {}).values():
                parts = [x.strip() for x in line.split("|")]
                if len(parts) == len(RECIPE_KEYS) and (prep is None or parts[3] == prep):
                    out.append(add_record(dict(zip(RECIPE_KEYS, parts, strict=True))))
            return out

        return Seq(
            OpenApp("Markor"),
            Tap(row_starting("recipes.txt")),
            Scan("lines", "detail_line"),
            OpenApp("Broccoli"),
            Seq(dynamic=adds),
            Finish(),
        )


register(
    AddContact(),
    NewContactDraft(),
    AddExpenses("ExpenseAddSingle", 1, 6),
    AddExpenses("ExpenseAddMultiple", 3, 20),
    DeleteExpenses("ExpenseDeleteSingle", 1, 0, 3),
    DeleteExpenses("ExpenseDeleteMultiple", 3, 0, 10),
    DeleteExpenses("ExpenseDeleteMultiple2", 3, 8, 17),
    DeleteDuplicates("ExpenseDeleteDuplicates", "expenses", "Pro Expense", EXPENSE_KEYS, 1, 0, 6),
    DeleteDuplicates("ExpenseDeleteDuplicates2", "expenses", "Pro Expense", EXPENSE_KEYS, 2, 8, 9),
    ExpensesFromMarkor(),
    AddRecipes("RecipeAddSingleRecipe", 1, 12),
    AddRecipes("RecipeAddMultipleRecipes", 3, 34),
    DeleteRecipes("RecipeDeleteSingleRecipe", 1, 0, 5),
    DeleteRecipes("RecipeDeleteSingleWithRecipeWithNoise", 1, 8, 10),
    DeleteRecipes("RecipeDeleteMultipleRecipes", 3, 0, 12),
    DeleteRecipes("RecipeDeleteMultipleRecipesWithNoise", 3, 8, 17),
    DeleteDuplicates("RecipeDeleteDuplicateRecipes", "recipes", "Broccoli", RECIPE_KEYS, 1, 0, 4),
    DeleteDuplicates("RecipeDeleteDuplicateRecipes2", "recipes", "Broccoli", RECIPE_KEYS, 2, 3, 11),
    DeleteDuplicates("RecipeDeleteDuplicateRecipes3", "recipes", "Broccoli", RECIPE_KEYS, 2, 6, 16),
    DeleteRecipesWithIngredient(),
    RecipesFromMarkor("RecipeAddMultipleRecipesFromMarkor", False, 24),
    RecipesFromMarkor("RecipeAddMultipleRecipesFromMarkor2", True, 26),
)
