"""Every ```python block of README.md imports what it names (run whole, the blocks need models, servers)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from papergym.core.errors import DependencyNotInstalled

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"^```python\n(.*?)^```", README.read_text(), flags=re.MULTILINE | re.DOTALL)


def import_lines(block: str) -> str:
    """The block's top-level import statements, as source."""
    tree = ast.parse(block)
    return "\n".join(
        ast.unparse(node) for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
    )


def test_readme_has_python_blocks() -> None:
    assert len(BLOCKS) >= 5
    assert all(import_lines(b) for b in BLOCKS[:2])


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_imports(index: int) -> None:
    source = import_lines(BLOCKS[index])
    try:
        exec(compile(source, f"README.md block {index}", "exec"), {})
    except DependencyNotInstalled as exc:  # an optional extra's block; the message names the extra
        pytest.skip(f"README block {index} needs an extra: {exc}")


def test_readme_uses_short_paths() -> None:
    """The facade's names are imported from the facade, not from the module that defines them."""
    text = "\n".join(BLOCKS)
    for deep in ("papergym.core.trajectory", "papergym.backends.model_roles", "papergym.backends.hf"):
        assert deep not in text
