"""``papergym view``: one self-contained static HTML report of a run's JSONL (no server, no CDN)."""

from __future__ import annotations

import base64
import difflib
import json
import logging
import mimetypes
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from papergym.core.errors import DependencyNotInstalled

logger = logging.getLogger(__name__)

#: the key of an episode record that holds its step records
TRACE = "trace"
MEDIA_KEYS = ("screen", "imagined_screen", "audio", "action_audio")


def load_run(path: Path) -> list[dict[str, Any]]:
    """The episode records of a run's JSONL, one dict per non-empty line."""
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def data_uri(path: Path) -> str:
    """``path``'s bytes as a ``data:`` URI (so the report is one file)."""
    mime = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def record_diff(entry: dict[str, Any]) -> list[tuple[str, str]]:
    """A unified diff of one ``db_diff`` entry, gold (``-``) to final (``+``), as (css class, line)."""

    def lines(record: Any) -> list[str]:
        return json.dumps(record, indent=1, sort_keys=True).splitlines() if record is not None else []

    diff = difflib.unified_diff(
        lines(entry.get("gold")), lines(entry.get("final")), "gold", "final", n=2, lineterm=""
    )
    kinds = {"+": "add", "-": "del", "@": "hunk"}
    return [(kinds.get(line[:1], ""), line) for line in diff]


def _embed(episodes: Iterable[dict[str, Any]], base: Path) -> list[dict[str, Any]]:
    """Copies of the records whose step media paths are replaced by data URIs."""
    out = []
    for ep in episodes:
        steps = []
        for step in ep.get(TRACE, []):
            step = dict(step)
            for key in MEDIA_KEYS:
                if key in step:
                    step[key] = data_uri(base / step[key])
            steps.append(step)
        out.append({**ep, TRACE: steps})
    return out


def render_report(run: Path, *, env_id: str | None = None) -> str:
    """The HTML of the report of ``run`` (a JSONL from ``papergym eval``).

    Args:
        run: the JSONL path; media paths in it are relative to its folder.
        env_id: shown in the filters when the records carry no ``env`` field.

    Returns:
        The whole HTML document; every image and sound is inline.
    """
    try:
        import jinja2
    except ImportError as exc:
        raise DependencyNotInstalled('pip install "papergym[view]"') from exc
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("papergym.viewer", "templates"),
        autoescape=True,
    )
    env.filters["record_diff"] = record_diff
    env.filters["tojson_pretty"] = lambda v: json.dumps(v, indent=1, sort_keys=True, default=repr)
    episodes = _embed(load_run(run), run.parent)
    for ep in episodes:
        ep.setdefault("env", env_id or "")
    template = env.get_template("report.html.j2")
    return template.render(
        title=run.name,
        episodes=episodes,
        envs=sorted({ep["env"] for ep in episodes}),
        task_ids=sorted({str(ep.get("task_id", "")) for ep in episodes}),
    )


def write_report(run: Path, out: Path | None = None, *, env_id: str | None = None) -> Path:
    """Write the report of ``run`` to ``out`` (default ``RUN.html`` beside it) and return the path."""
    out = out or run.with_suffix(".html")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(run, env_id=env_id), encoding="utf-8")
    logger.info("report of %s written to %s", run, out)
    return out
