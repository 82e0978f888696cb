"""The public facade: short import paths, loaded lazily so ``import papergym`` stays light."""

from __future__ import annotations

import subprocess
import sys

import pytest

import papergym
from papergym import backends, core

BACKEND_NAMES = (
    "HFChatModel",
    "OpenAIChatModel",
    "CachedChatModel",
    "ChatModelPolicy",
    "ModelUser",
    "ModelJudge",
    "ModelCritic",
    "ModelReader",
    "ModelAnnotator",
)


def test_import_papergym_is_light() -> None:
    code = (
        "import sys, papergym, papergym.backends, papergym.core; "
        "print(sorted(m for m in ('torch', 'transformers', 'openai') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_rollout_is_reexported() -> None:
    from papergym.core.trajectory import rollout, rollout_group

    assert papergym.rollout is rollout
    assert papergym.rollout_group is rollout_group
    assert core.rollout is rollout


@pytest.mark.parametrize("name", BACKEND_NAMES)
def test_backend_names_resolve_to_their_classes(name: str) -> None:
    obj = getattr(backends, name)
    assert isinstance(obj, type) and obj.__name__ == name
    assert name in dir(backends) and name in backends.__all__


def test_unknown_names_raise_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchModel"):
        _ = backends.NoSuchModel
    with pytest.raises(AttributeError, match="nothing"):
        _ = papergym.nothing
