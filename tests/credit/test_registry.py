"""The credit package's short names cover every GroupReward and AdvantageHook it defines."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import papergym.credit as credit
from papergym.credit.protocols import AdvantageHook, GroupReward

CREDIT_DIR = Path(credit.__file__).parent


def _defined_classes() -> set[str]:
    names = set()
    for path in CREDIT_DIR.glob("*.py"):
        if path.stem == "protocols":
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                names.add(f"papergym.credit.{path.stem}:{node.name}")
    return names


@pytest.mark.parametrize("name", sorted(credit.GROUP_REWARDS))
def test_every_group_reward_name_builds_a_group_reward(name: str) -> None:
    assert isinstance(credit.resolve(name, credit.GROUP_REWARDS), GroupReward)


@pytest.mark.parametrize("name", sorted(credit.ADVANTAGE_HOOKS))
def test_every_hook_name_builds_an_advantage_hook(name: str) -> None:
    assert isinstance(credit.resolve(name, credit.ADVANTAGE_HOOKS), AdvantageHook)


def test_the_names_cover_every_mechanism_defined_in_credit() -> None:
    named = set(credit.GROUP_REWARDS.values()) | set(credit.ADVANTAGE_HOOKS.values())
    mechanisms = {c for c in _defined_classes() if c.endswith(("Reward", "Advantage", "AdvantageShaping"))}
    assert mechanisms == named


def test_every_export_resolves_and_rzero_is_exported() -> None:
    for name in credit.__all__:
        assert getattr(credit, name) is not None
    assert credit.RZeroReward is importlib.import_module("papergym.credit.rzero").RZeroReward


def test_unknown_names_raise() -> None:
    with pytest.raises(ValueError, match="majority_vote"):
        credit.resolve("nope", credit.GROUP_REWARDS)
    assert credit.resolve(None, credit.GROUP_REWARDS) is None


def test_import_does_not_load_torch() -> None:
    code = "import sys, papergym.credit; print('torch' in sys.modules, 'transformers' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
