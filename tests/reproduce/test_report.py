import json

import numpy as np
import pytest

from papergym.reproduce.report import (
    Interval,
    direction,
    markdown_table,
    paired_difference,
    plot_arms,
    provenance,
    stratified_bootstrap,
    write_readme_section,
    write_results,
)


def test_bootstrap_interval_covers_the_mean_and_shrinks_with_more_tasks():
    rng = np.random.default_rng(0)
    few = (rng.random((3, 20)) < 0.6).astype(float)
    many = (rng.random((3, 2000)) < 0.6).astype(float)
    a, b = stratified_bootstrap(few), stratified_bootstrap(many)
    assert a.low <= a.mean <= a.high and b.low <= b.mean <= b.high
    assert (b.high - b.low) < (a.high - a.low) / 3
    assert b.low < 0.6 < b.high


def test_bootstrap_is_seeded_and_leaves_the_global_generator_alone():
    scores = [[1, 0, 1, 1, 0], [0, 0, 1, 1, 1]]
    np.random.seed(123)
    before = np.random.get_state()[1].copy()
    assert stratified_bootstrap(scores, seed=4) == stratified_bootstrap(scores, seed=4)
    assert np.array_equal(np.random.get_state()[1], before)


def test_constant_scores_give_a_degenerate_interval():
    assert stratified_bootstrap([[1.0, 1.0], [1.0, 1.0]]) == Interval(1.0, 1.0, 1.0)


@pytest.mark.parametrize("bad", [[], [[np.nan, 1.0]], [[[1.0]]]])
def test_bad_score_matrices_are_refused(bad):
    with pytest.raises(ValueError):
        stratified_bootstrap(bad)


def test_paired_difference_needs_paired_arms_and_sees_a_real_gap():
    control = np.zeros((3, 50))
    treatment = np.ones((3, 50))
    treatment[:, :10] = 0.0  # 0.8 better
    gap = paired_difference(treatment, control)
    assert gap.mean == pytest.approx(0.8) and gap.low > 0.0
    with pytest.raises(ValueError, match="same"):
        paired_difference(treatment, control[:, :10])


def test_direction_is_read_from_the_interval():
    assert direction(Interval(0.1, 0.02, 0.2), +1) == "matches"
    assert direction(Interval(0.1, 0.02, 0.2), -1) == "does not match"
    assert direction(Interval(-0.1, -0.2, -0.01), -1) == "matches"
    assert direction(Interval(0.05, -0.01, 0.1), +1) == "inconclusive"
    assert direction(Interval(0.05, -0.01, 0.1), 0) == "matches"
    assert direction(Interval(0.05, 0.01, 0.1), 0) == "does not match"
    with pytest.raises(ValueError):
        direction(Interval(0, 0, 0), 2)


def test_results_json_records_args_versions_and_raw_curves(tmp_path):
    from dataclasses import dataclass

    @dataclass
    class Args:
        seeds: int = 3
        out: str = "runs/x"

    path = write_results(
        tmp_path / "run",
        name="demo",
        args=Args(),
        curves={"grpo": {0: [{"step": 0, "success": np.float64(0.5)}]}},
        summary={"gap": Interval(0.1, 0.0, 0.2)},
    )
    record = json.loads(path.read_text())
    assert record["provenance"]["args"] == {"seeds": 3, "out": "runs/x"}
    assert record["provenance"]["packages"]["numpy"] == np.__version__
    assert "git_commit" in record["provenance"]
    assert record["curves"]["grpo"]["0"][0]["success"] == 0.5
    assert record["summary"]["gap"] == {"mean": 0.1, "low": 0.0, "high": 0.2, "confidence": 0.95}


def test_provenance_takes_a_plain_mapping():
    assert provenance({"steps": 5})["args"] == {"steps": 5}


def test_readme_section_is_replaced_in_place_and_appended_when_new(tmp_path):
    readme = tmp_path / "README.md"
    section = "<!-- reproduce:a:begin -->\nold\n<!-- reproduce:a:end -->"
    readme.write_text(f"# Bench\n\nintro\n\n{section}\n\ntail\n")
    write_readme_section(readme, "a", "new table")
    write_readme_section(readme, "b", "second")
    text = readme.read_text()
    assert "old" not in text and "new table" in text
    assert text.startswith("# Bench\n\nintro\n\n<!-- reproduce:a:begin -->\nnew table\n")
    assert "\n\ntail\n" in text
    assert text.endswith("tail\n\n<!-- reproduce:b:begin -->\nsecond\n<!-- reproduce:b:end -->\n")
    write_readme_section(readme, "a", "new table")
    assert readme.read_text() == text  # idempotent


def test_unbalanced_markers_are_refused(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("<!-- reproduce:a:begin -->\nno end\n")
    with pytest.raises(ValueError, match="unbalanced"):
        write_readme_section(readme, "a", "x")


def test_markdown_table_formats_and_escapes():
    table = markdown_table([{"arm": "a|b", "acc": 0.12345, "n": 3}], ["arm", "acc", "n"])
    assert table.splitlines() == ["| arm | acc | n |", "|---|---|---|", "| a\\|b | 0.123 | 3 |"]


def test_plot_arms_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib", reason="plots need the train extra")
    series = {
        "base": {1: Interval(0.2, 0.1, 0.3), 4: Interval(0.5, 0.4, 0.6)},
        "grpo": {1: Interval(0.3, 0.2, 0.4), 4: Interval(0.45, 0.35, 0.55)},
    }
    png = plot_arms(
        tmp_path / "fig" / "passk.png", series, xlabel="k", ylabel="pass@k", log_x=True, reference={1: 0.25}
    )
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
