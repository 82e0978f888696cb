"""Fixtures for the trainer tests: a small tiny-model checkpoint built once per session, one torch thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread() -> Iterator[None]:
    """One intra-op thread (faster on a busy 2-core machine), restored after the module."""
    try:
        import torch
    except ImportError:
        yield
        return
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


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
