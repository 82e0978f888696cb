from __future__ import annotations

import gymnasium as gym
import pytest

import papergym
from papergym.core.errors import BackendError, DependencyNotInstalled, PapergymError, require


def test_require_names_the_extra_of_a_missing_module() -> None:
    with pytest.raises(DependencyNotInstalled, match=r'pip install "papergym\[audio\]"') as info:
        require("a_module_that_does_not_exist_here", "audio")
    assert isinstance(info.value, PapergymError) and isinstance(info.value, gym.error.DependencyNotInstalled)
    assert require("json", "dev").dumps([1]) == "[1]"


def test_backend_error_carries_retryable() -> None:
    assert BackendError("down", retryable=True).retryable and not BackendError("bad").retryable


def test_module_qualified_ids_for_remote_workers() -> None:
    env = gym.make("papergym:papergym/Reasoning-v0", domain="science")
    assert env.reset(seed=0)[1]["domain"] == "science"
    gym.register_envs(papergym)  # the import-hygiene marker works on the package
