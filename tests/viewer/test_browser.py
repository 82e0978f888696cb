"""The report opened in a real browser (headless Chromium): its rendered DOM and a screenshot."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from papergym.viewer import write_report

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="headless Chromium not installed: `apt-get install -y chromium` (make test installs it as root)",
)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run")


def _chromium(*args: str) -> str:
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, *FLAGS, *args], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def test_rendered_dom_holds_task_actions_and_screens(gui_run: Path, tmp_path: Path) -> None:
    report = write_report(gui_run, tmp_path / "report.html")
    dom = _chromium("--dump-dom", report.as_uri())
    first = json.loads(gui_run.read_text().splitlines()[0])
    assert first["task_id"] in dom
    for step in first["trace"]:
        action = step["action"].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert action in dom
    assert '<img class="screen"' in dom and 'src="data:image/png;base64,' in dom
    assert 'id="f-count">2 of 2<' in dom  # the filter script ran and counted both episodes


def test_screenshot_of_the_report(gui_run: Path, tmp_path: Path) -> None:
    report = write_report(gui_run, tmp_path / "report.html")
    shot = ROOT / "runs" / "viewer" / "report.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.unlink(missing_ok=True)
    _chromium(f"--screenshot={shot}", "--window-size=1280,900", report.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5_000
