"""Replace one marked section of ``benchmarks/README.md`` (every benchmark script writes its table so)."""

from __future__ import annotations

import sys
from pathlib import Path


def write_section(readme: str | Path, name: str, heading: str, body: str) -> None:
    """Put ``body`` between ``<!-- name:begin -->`` and ``<!-- name:end -->`` in ``readme``.

    The markers' place is kept when they exist; otherwise a ``## heading`` section is appended.
    """
    path = Path(readme)
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    block = f"{begin}\n{body}\n{end}"
    if begin in text and end in text:
        text = text[: text.index(begin)] + block + text[text.index(end) + len(end) :]
    else:
        text = text.rstrip("\n") + f"\n\n## {heading}\n\n" + block + "\n"
    path.write_text(text, encoding="utf-8")
    print(f"written to {path}", file=sys.stderr)
