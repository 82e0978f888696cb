"""What every reproduction reports, once: provenance, intervals, the verdict and the README section.

DESIGN.md §Reproductions asks each ``papergym reproduce NAME`` run to write ``results.json`` with every
argument, the git commit, package versions and per-seed raw curves (so any figure can be re-plotted or
re-run exactly), to give every figure a 95% interval, and to state the direction against the paper from
the intervals, not from the means. The drivers in this package are thin; this module is the part they
share.

Intervals are stratified bootstrap intervals over (seed, task) score matrices, as ``rliable`` computes
them for RL benchmarks (Agarwal et al. 2021, arXiv 2108.13264): seeds are resampled, and within each
resampled seed its tasks are resampled, so both sources of variance are in the interval. The resampling
generator is seeded explicitly (never the global one), so a report is reproducible.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import logging
import platform
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import numpy as np

from papergym.core.errors import require

logger = logging.getLogger(__name__)

#: Packages whose versions a results.json records (absent ones are recorded as None).
PROVENANCE_PACKAGES = ("papergym", "gymnasium", "numpy", "torch", "transformers", "tokenizers", "trl")

Direction = Literal["matches", "does not match", "inconclusive"]


@dataclass(frozen=True)
class Interval:
    """A point estimate with its confidence interval.

    Attributes:
        mean: the estimate on the full data.
        low: the interval's lower end.
        high: the interval's upper end.
        confidence: the interval's nominal coverage (0.95 for a 95% interval).
    """

    mean: float
    low: float
    high: float
    confidence: float = 0.95

    def __str__(self) -> str:
        return f"{self.mean:.3f} [{self.low:.3f}, {self.high:.3f}]"

    def excludes(self, value: float) -> bool:
        """Whether ``value`` lies outside the interval."""
        return value < self.low or value > self.high


def _as_matrix(scores: Sequence[Sequence[float]] | Sequence[float] | np.ndarray) -> np.ndarray:
    matrix = np.asarray(scores, dtype=float)
    if matrix.ndim == 1:  # one score per seed: a (seeds, 1) matrix
        matrix = matrix[:, None]
    if matrix.ndim != 2 or matrix.size == 0:
        raise ValueError(f"scores must be a non-empty (seeds, tasks) matrix, got shape {matrix.shape}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("scores hold NaN or infinite values")
    return matrix


def stratified_bootstrap(
    scores: Sequence[Sequence[float]] | Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """The mean score with a stratified bootstrap interval over seeds and, within each seed, tasks.

    Args:
        scores: a ``(seeds, tasks)`` matrix of per-task scores (success 0/1, pass@k, accuracy), or one
            score per seed.
        confidence: the interval's coverage.
        resamples: bootstrap resamples.
        seed: seeds the resampling generator.

    Returns:
        The mean over all scores, with the percentile interval of the resampled means.

    >>> interval = stratified_bootstrap([[1, 1, 0, 1], [1, 0, 1, 1], [1, 1, 1, 0]])
    >>> round(interval.mean, 3), interval.low <= interval.mean <= interval.high
    (0.75, True)
    """
    matrix = _as_matrix(scores)
    means = _resampled(matrix, resamples, seed).mean(axis=(1, 2))  # (R,)
    return _percentile_interval(float(matrix.mean()), means, confidence)


def _resampled(matrix: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """``(R, S, T, ...)`` stratified resamples of a ``(seeds, tasks, ...)`` array: seeds, then tasks within
    each (trailing axes move together)."""
    rng = np.random.default_rng(seed)
    n_seeds, n_tasks = matrix.shape[:2]
    seed_rows = rng.integers(0, n_seeds, size=(resamples, n_seeds))  # (R, S)
    task_cols = rng.integers(0, n_tasks, size=(resamples, n_seeds, n_tasks))  # (R, S, T)
    return matrix[seed_rows[:, :, None], task_cols]  # (R, S, T, ...)


def _percentile_interval(estimate: float, resampled: np.ndarray, confidence: float) -> Interval:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    alpha = (1.0 - confidence) / 2.0
    low, high = np.nanquantile(resampled, [alpha, 1.0 - alpha])
    return Interval(estimate, float(low), float(high), confidence)


def stratified_ratio(
    numerator: Sequence[Sequence[float]] | np.ndarray,
    denominator: Sequence[Sequence[float]] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval | None:
    """``sum(numerator) / sum(denominator)`` (a share of a subset, e.g. of the correct answers) with the
    stratified bootstrap interval of the same resamples of (seed, task) cells, both matrices resampled
    together. Resamples whose denominator is 0 are left out; None when the denominator is 0 overall.

    >>> share = stratified_ratio([[1, 0], [1, 1]], [[2, 1], [1, 2]])
    >>> round(share.mean, 3), share.low <= share.mean <= share.high
    (0.5, True)
    """
    num, den = _as_matrix(numerator), _as_matrix(denominator)
    if num.shape != den.shape:
        raise ValueError(f"numerator and denominator shapes differ: {num.shape} and {den.shape}")
    if den.sum() <= 0:
        return None
    both = _resampled(np.stack([num, den], axis=-1), resamples, seed)  # (R, S, T, 2)
    sums = both.sum(axis=(1, 2))  # (R, 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratios = np.where(sums[:, 1] > 0, sums[:, 0] / sums[:, 1], np.nan)  # (R,)
    return _percentile_interval(float(num.sum() / den.sum()), ratios, confidence)


def paired_difference(
    treatment: Sequence[Sequence[float]] | np.ndarray,
    control: Sequence[Sequence[float]] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Interval:
    """``treatment - control`` with a stratified bootstrap interval, the arms paired by seed and task.

    Both arms must have been run on the same seeds and tasks (DESIGN.md: compared arms differ only in the
    mechanism), so the per-(seed, task) differences are resampled together.
    """
    a, b = _as_matrix(treatment), _as_matrix(control)
    if a.shape != b.shape:
        raise ValueError(f"paired arms need the same (seeds, tasks) shape, got {a.shape} and {b.shape}")
    return stratified_bootstrap(a - b, confidence=confidence, resamples=resamples, seed=seed)


def direction(difference: Interval, paper_sign: int) -> Direction:
    """The verdict on a paper's claimed direction, read from the interval of our difference.

    Args:
        difference: our ``treatment - control`` interval.
        paper_sign: the paper's direction: +1 (treatment better), -1 (worse) or 0 (no difference).

    Returns:
        ``"matches"`` when the interval lies on the paper's side of zero (or, for a claimed null effect,
        contains zero), ``"does not match"`` when it lies on the other side (or, for a null claim,
        excludes zero), else ``"inconclusive"``.

    >>> direction(Interval(0.2, 0.1, 0.3), +1), direction(Interval(0.0, -0.1, 0.2), +1)
    ('matches', 'inconclusive')
    """
    if paper_sign not in (-1, 0, 1):
        raise ValueError(f"paper_sign must be -1, 0 or +1, got {paper_sign}")
    if paper_sign == 0:
        return "does not match" if difference.excludes(0.0) else "matches"
    if difference.low > 0.0:
        return "matches" if paper_sign > 0 else "does not match"
    if difference.high < 0.0:
        return "matches" if paper_sign < 0 else "does not match"
    return "inconclusive"


def _git_commit() -> str | None:
    package_dir = Path(__file__).resolve().parent
    try:

        def git(*argv: str) -> str:
            done = subprocess.run(
                ["git", *argv], cwd=package_dir, capture_output=True, text=True, timeout=10, check=True
            )
            return done.stdout.strip()

        commit = git("rev-parse", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no")
    except (OSError, subprocess.SubprocessError) as error:  # not a checkout, or no git: recorded as unknown
        logger.warning("git commit not recorded: %s", error)
        return None
    return f"{commit}+dirty" if dirty else commit


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Interval):
        return dataclasses.asdict(value)
    return value


def provenance(args: Any) -> dict[str, Any]:
    """Everything needed to re-run a reproduction exactly: its arguments, commit, versions and machine."""
    return {
        "args": _jsonable(args),
        "git_commit": _git_commit(),
        "packages": {name: _version(name) for name in PROVENANCE_PACKAGES},
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def write_results(
    out: str | Path,
    *,
    name: str,
    args: Any,
    curves: Mapping[str, Mapping[int, Sequence[Mapping[str, float]]]],
    summary: Mapping[str, Any],
) -> Path:
    """Write ``results.json``: provenance, per-arm per-seed raw curves and the summary.

    Args:
        out: the run directory (created).
        name: the reproduction's name.
        args: the driver's arguments (a dataclass or a mapping).
        curves: ``{arm: {seed: [metrics per logged step]}}``, the raw material of every figure.
        summary: the headline numbers (intervals are written as ``{"mean", "low", "high", "confidence"}``).

    Returns:
        The path of the file written.
    """
    path = Path(out)
    path.mkdir(parents=True, exist_ok=True)
    record = {
        "name": name,
        "provenance": provenance(args),
        "curves": _jsonable(curves),
        "summary": _jsonable(summary),
    }
    target = path / "results.json"
    target.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n")
    return target


def _revive(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"mean", "low", "high", "confidence"}:
            return Interval(**value)
        return {int(k) if isinstance(k, str) and k.isdigit() else k: _revive(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_revive(v) for v in value]
    return value


def read_summary(results: str | Path) -> dict[str, Any]:
    """The ``summary`` of a ``results.json`` with its intervals as `Interval` and integer keys (k, seeds)
    as ints again: what a driver's ``section`` takes, to re-render a table without retraining. A summary
    without a ``setting`` gets the run's arguments (its provenance) there."""
    record = json.loads(Path(results).read_text())
    summary: dict[str, Any] = _revive(record["summary"])
    summary.setdefault("setting", record.get("provenance", {}).get("args"))
    return summary


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """A GitHub markdown table of ``rows`` (floats to 3 decimals, intervals as ``mean [low, high]``)."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(row.get(column, "")) for column in columns) + " |" for row in rows]
    return "\n".join(lines)


def write_readme_section(readme: str | Path, name: str, markdown: str) -> None:
    """Put ``markdown`` between ``<!-- reproduce:NAME:begin -->`` and ``<!-- reproduce:NAME:end -->``.

    The section is replaced where the markers exist and appended (with its markers) where they do not;
    the rest of the file is left byte for byte.

    Raises:
        ValueError: when only one of the two markers is present, or they are out of order.
    """
    path = Path(readme)
    begin, end = f"<!-- reproduce:{name}:begin -->", f"<!-- reproduce:{name}:end -->"
    text = path.read_text() if path.exists() else ""
    block = f"{begin}\n{markdown.strip()}\n{end}"
    has_begin, has_end = begin in text, end in text
    if has_begin != has_end or (has_begin and text.index(begin) > text.index(end)):
        raise ValueError(f"{path}: the markers of reproduction {name!r} are unbalanced")
    if has_begin:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + block + tail
    else:
        separator = "" if not text else ("\n" if text.endswith("\n") else "\n\n")
        text = text + separator + block + "\n"
    path.write_text(text)


def plot_arms(
    png: str | Path,
    series: Mapping[str, Mapping[float, Interval]],
    *,
    xlabel: str,
    ylabel: str,
    title: str = "",
    log_x: bool = False,
    reference: Mapping[float, float] | None = None,
) -> Path:
    """One line per arm with its interval as a band (e.g. pass@k against k, success against step).

    Args:
        png: the image to write.
        series: ``{arm: {x: Interval}}``.
        xlabel: the x axis label.
        ylabel: the y axis label.
        title: the figure title.
        log_x: a log-2 x axis (pass@k curves).
        reference: an optional dashed reference line ``{x: y}`` (e.g. the paper's numbers).

    Returns:
        The path written.
    """
    matplotlib = require("matplotlib", "train")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for arm, points in series.items():
        xs = sorted(points)
        ax.plot(xs, [points[x].mean for x in xs], marker="." if len(xs) < 40 else None, label=arm)
        ax.fill_between(xs, [points[x].low for x in xs], [points[x].high for x in xs], alpha=0.2)
    if reference:
        xs = sorted(reference)
        ax.plot(xs, [reference[x] for x in xs], linestyle="--", color="grey", label="paper")
    if log_x:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    target = Path(png)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=100)
    plt.close(fig)
    return target
