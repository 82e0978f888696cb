"""Fixtures for the trainer tests: a small tiny-model checkpoint built once per session."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved tiny Qwen2 (hidden 32, 2 layers, context 4096) with papergym's BPE tokenizer."""
    pytest.importorskip("transformers")
    from papergym.baselines.tiny import build_tiny

    path = tmp_path_factory.mktemp("tiny_policy")
    build_tiny(path, hidden=32, layers=2, heads=4, kv_heads=2)
    return path


@pytest.fixture
def tiny_policy(tiny_dir: Path):  # -> PolicyModel
    """A fresh `PolicyModel` loaded from `tiny_dir` (tests may train it)."""
    from papergym.baselines.policy import load_policy

    return load_policy(tiny_dir)
