from __future__ import annotations

from pathlib import Path

import pytest

from papergym.cli import main


@pytest.fixture(scope="session")
def gui_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A recorded oracle eval of MobileGUI-v0 (two episodes, with screens)."""
    out = tmp_path_factory.mktemp("gui") / "run.jsonl"
    assert main(["eval", "papergym/MobileGUI-v0", "--episodes", "2", "--out", str(out)]) == 0
    return out
