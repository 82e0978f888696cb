"""Fixtures for the backend tests: a tiny checkpoint built once, and fake OpenAI servers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.backends.fake_openai_server import FakeOpenAIServer
from tests.backends.tiny_lm import build_tiny_checkpoint


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny_lm"))


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """A factory of fake servers (``fake_server(script, default=...)``), all stopped at teardown."""
    servers: list[FakeOpenAIServer] = []

    def start(*args: object, **kwargs: object) -> FakeOpenAIServer:
        server = FakeOpenAIServer(*args, **kwargs)  # type: ignore[arg-type]
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
