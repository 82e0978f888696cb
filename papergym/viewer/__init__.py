"""See episodes: per-step recording of a run, and a self-contained static HTML report of it."""

from papergym.viewer.recording import AssetWriter, assets_dir, episode_summary, step_records, write_episodes
from papergym.viewer.report import load_run, render_report, write_report

__all__ = [
    "AssetWriter",
    "assets_dir",
    "episode_summary",
    "load_run",
    "render_report",
    "step_records",
    "write_episodes",
    "write_report",
]
