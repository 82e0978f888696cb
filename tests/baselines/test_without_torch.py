"""With torch and the other `llm` libraries absent, trainers import, ``-h`` works, and a run raises
`DependencyNotInstalled` naming the extra (never a raw ModuleNotFoundError).

Each check runs in a subprocess whose ``sys.meta_path`` refuses the heavy libraries.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from papergym.cli import TRAINERS

BLOCKED = ("torch", "transformers", "safetensors", "tokenizers", "accelerate", "trl")
BLOCKER = f"""
import sys

class _Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {BLOCKED!r}:
            raise ImportError(f"blocked for this test: {{name}}")
        return None

sys.meta_path.insert(0, _Block())
"""
REPO = Path(__file__).resolve().parents[2]
TRAINER_MODULES = sorted(
    {spec.partition(":")[0] for spec in TRAINERS.values()} | {"papergym.baselines.jzero"}
)


def _python(code: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (tmp_path / "sitecustomize.py").write_text(BLOCKER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_the_blocker_blocks(tmp_path: Path) -> None:
    out = _python("import torch", tmp_path)
    assert out.returncode != 0 and "blocked for this test" in out.stderr


@pytest.mark.parametrize("module", TRAINER_MODULES)
def test_trainer_modules_import_without_torch(module: str, tmp_path: Path) -> None:
    out = _python(f"import {module}, sys; assert 'torch' not in sys.modules", tmp_path)
    assert out.returncode == 0, out.stderr


def test_train_help_works_without_torch(tmp_path: Path) -> None:
    out = _python("from papergym.cli import main; main(['train', 'grpo', '-h'])", tmp_path)
    assert out.returncode == 0, out.stderr
    assert "--steps" in out.stdout and "--env" in out.stdout


@pytest.mark.parametrize("algo", sorted(TRAINERS))
def test_a_train_run_names_the_extra(algo: str, tmp_path: Path) -> None:
    argv = ["train", algo, "--env", "papergym/Math-v0", "--out", str(tmp_path / "run")]
    if algo == "merge":
        argv = [
            "train",
            algo,
            "--base",
            str(tmp_path),
            "--experts",
            str(tmp_path),
            "--out",
            str(tmp_path / "m"),
        ]
    if algo in ("world_model", "induction"):  # MobileGUI-v0 itself / synthetic text: no --env
        argv = ["train", algo, "--out", str(tmp_path / "run")]
    out = _python(f"from papergym.cli import main; main({argv!r})", tmp_path)
    assert out.returncode != 0
    assert "DependencyNotInstalled" in out.stderr and 'pip install "papergym[llm]"' in out.stderr, out.stderr
    assert "ModuleNotFoundError" not in out.stderr
