"""``--workers``: the (seed, arm) runs of a reproduction in spawned processes give the results of one process;
a driver that trains in one process refuses it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from papergym.reproduce import driver

PARALLEL = [name for name in driver.PLANNED if getattr(driver.module(name), "PARALLEL", False)]


def test_the_service_memory_and_search_reproductions_take_workers() -> None:
    assert {"iapo", "speechgym", "awm", "cafe"} <= set(PARALLEL)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("iapo", marks=pytest.mark.slow),
        # the default suite runs one driver end to end in two workers on its cheapest path,
        # tests/reproduce/test_cafe.py::test_learned_critic_runs_give_the_same_results_in_two_workers
        pytest.param("speechgym", marks=pytest.mark.slow),
        pytest.param("awm", marks=pytest.mark.slow),
    ],
)
def test_workers_give_the_results_of_one_process(name: str, tmp_path: Path) -> None:
    records = {}
    for workers in (1, 2):  # both runs share one warm start, cached beside them
        out = tmp_path / f"w{workers}"
        driver.main(name, ["--smoke", "--out", str(out), "--workers", str(workers)])
        records[workers] = json.loads((out / "results.json").read_text())
    assert [records[w]["provenance"]["args"]["workers"] for w in (1, 2)] == [1, 2]
    assert records[1]["summary"] == records[2]["summary"]
    assert records[1]["curves"] == records[2]["curves"]
    assert all(len(per_seed) == 2 for per_seed in records[2]["curves"].values())  # both smoke seeds


def test_a_driver_without_workers_refuses_them(tmp_path: Path) -> None:
    serial = next(name for name in driver.PLANNED if name not in PARALLEL)
    with pytest.raises(ValueError, match="--workers applies to iapo"):
        driver.main(serial, ["--smoke", "--out", str(tmp_path), "--workers", "2"])
    assert not any(tmp_path.iterdir())  # refused before anything ran


def test_map_jobs_keeps_the_order_and_raises_a_jobs_error() -> None:
    assert driver.map_jobs(math.factorial, [3, 0, 5], workers=2, threads=1) == [6, 1, 120]
    assert driver.map_jobs(math.factorial, [4], workers=1, threads=1) == [24]
    with pytest.raises(ValueError, match="not defined for negative"):
        driver.map_jobs(math.factorial, [2, -1], workers=2, threads=1)
    with pytest.raises(ValueError, match="workers must be >= 1"):
        driver.map_jobs(math.factorial, [2], workers=0, threads=1)
