"""`papergym render ID --seed S --out DIR`: PNGs of an oracle episode's screens."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from papergym.cli import main


def test_render_writes_one_png_per_screen(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    image = pytest.importorskip("PIL.Image")
    args = ["render", "papergym/MobileGUI-v0", "--seed", "2", "--out", str(tmp_path)]
    assert main([*args, "--template", "ContactsAddContact"]) == 0
    files = sorted(tmp_path.glob("step_*.png"))
    assert len(files) >= 6  # the first screen, then one per oracle step
    assert "success=True" in capsys.readouterr().out
    frames = [np.asarray(image.open(f).convert("RGB")) for f in files]
    for frame in frames:
        assert frame.shape == (2480, 1160, 3)
        assert frame.std() > 10  # not blank
    assert any((a != b).any() for a, b in itertools.pairwise(frames))  # the screen changes


def test_render_refuses_envs_without_a_screen(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="no screen"):
        main(["render", "papergym/Reasoning-v0", "--out", str(tmp_path)])
