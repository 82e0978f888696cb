"""What every reproduction driver shares: its common arguments, the SFT warm start, and the arm check.

A driver module ``papergym/reproduce/NAME.py`` defines

- ``Args``: a dataclass extending `ReproArgs` (its fields are the ``papergym reproduce NAME`` flags);
- ``SMOKE``: the field overrides of ``--smoke`` (the same code path in well under a minute);
- ``REFERENCE`` and ``MECHANISM``: the reference arm and, per other arm, the trainer fields in which it
  may differ from the reference (the paper's mechanism and nothing else);
- ``arm_configs(args) -> {arm: trainer Args}``: the configs the arms train with, so a test can check
  that arms differ in exactly the named fields (`differing_fields`);
- ``PARALLEL`` (optional, default False): True where ``run`` trains its (seed, arm) runs with `train_arms`,
  so ``--workers`` applies;
- ``run(args) -> dict``: trains the arms, evaluates them, writes ``results.json``, the PNG and the table
  (and the README section with ``--write``), and returns the summary.

`main` is the entry point of ``papergym reproduce``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from papergym.core.errors import require

if TYPE_CHECKING:
    from papergym.baselines import grpo

logger = logging.getLogger(__name__)

Job = TypeVar("Job")
Result = TypeVar("Result")

PLANNED = ("es-vs-grpo", "ttpo", "prefix", "m2rl", "iapo", "speechgym", "awm", "cafe", "wm-r1", "jzero")
"""Every reproduction DESIGN.md §Reproductions names, in its order."""


@dataclass
class ReproArgs:
    """The flags every reproduction takes."""

    out: str = ""
    """The run directory ("": runs/reproduce/NAME)."""
    model: str = "tiny"
    """The policy's starting point: "tiny" (the tiny LM built in code, SFT-warmed where the driver says)
    or a local HF checkpoint directory (used as is, no SFT)."""
    seeds: int = 3
    """Training seeds per arm (DESIGN.md: at least 3)."""
    steps: int | None = None
    """Training steps per arm (None: the driver's default budget)."""
    device: str = "cpu"
    """The torch device (cuda for a GPU run)."""
    threads: int = 1
    """torch CPU threads (1 is fastest on a shared 2-core machine)."""
    workers: int = 1
    """Processes training and scoring the (seed, arm) runs side by side, each with ``threads`` torch
    threads (2 on a 2-core machine halves the time; the results do not depend on it). Drivers whose module
    sets ``PARALLEL = True`` take it; the others refuse a value above 1."""
    micro_batch: int = 1
    """Rows per forward/backward pass of every GRPO update and SFT step (gradients accumulate to the whole
    batch's; 1 is fastest on a CPU, raise it on a GPU as memory allows)."""
    smoke: bool = False
    """Run the same code path on a minimal budget (a test runs every --smoke)."""
    write: str | None = None
    """A markdown file (benchmarks/README.md) to write this reproduction's section into."""
    render: str | None = None
    """Train nothing: re-render table.md (and the --write section) from this results.json."""


class GroupShape(Protocol):
    """What `grpo_config` reads from a driver's args: the GRPO batch shape every arm shares."""

    env: str
    env_kw: list[str]
    prompts_per_step: int
    group_size: int
    max_new_tokens: int
    device: str
    threads: int
    micro_batch: int


def grpo_config(
    args: GroupShape,
    *,
    model: str,
    out: Path,
    seed: int,
    steps: int,
    lr: float,
    env: str | None = None,
    env_kw: Sequence[str] | None = None,
    **mechanism: Any,
) -> grpo.Args:
    """One GRPO arm's trainer config: the driver's batch shape, device and threads, plain GRPO, no
    checkpoints or progress bar; ``mechanism`` holds the fields in which the arm differs (e.g.
    ``prefix_model``), ``env`` / ``env_kw`` override the driver's env (a per-domain expert)."""
    from papergym.baselines import grpo

    return grpo.Args(
        env=args.env if env is None else env,
        env_kw=list(args.env_kw if env_kw is None else env_kw),
        model=model,
        out=str(out),
        seed=seed,
        steps=steps,
        prompts_per_step=args.prompts_per_step,
        group_size=args.group_size,
        max_new_tokens=args.max_new_tokens,
        lr=lr,
        variant="grpo",
        checkpoint_every=0,
        progress=False,
        threads=args.threads,
        device=args.device,
        micro_batch=args.micro_batch,
        **mechanism,
    )


@dataclass
class WarmStartArgs(ReproArgs):
    """The flags of a reproduction on a Reasoning-style env whose base is the SFT-warmed tiny LM."""

    env: str = "papergym/Reasoning-v0"
    """The env every arm trains and is evaluated on."""
    env_kw: list[str] = field(default_factory=list)
    """Its kwargs as key=value."""
    family_key: str = "domain"
    """The reset-info key whose value is a held-out task's family."""
    max_new_tokens: int = 24
    """Token budget of one answer."""
    sft_episodes: int = 4000
    """Oracle demonstrations of the SFT warm start (with --model DIR: no SFT)."""
    sft_steps: int = 600
    """SFT optimizer steps."""
    sft_batch: int = 32
    """SFT batch size."""
    sft_lr: float = 2e-3
    """SFT learning rate (a from-scratch tiny model)."""
    sft_demonstrator: str | None = None
    """The policy playing the SFT demonstrations (``module:Class``, `papergym.baselines.sft.Args`'s
    ``demonstrator``); None: the env's privileged oracle."""
    induction_steps: int = 0
    """Steps of induction pre-training (`papergym.baselines.induction`: copy spans out of the context)
    before the SFT warm start of the tiny LM (0: none; with --model DIR: never). Measured on VoiceService-v0:
    it made the SFT model copy worse, not better (benchmarks/README.md, "Tiny-LM copying")."""


SMOKE_WARM_START: dict[str, Any] = {
    "seeds": 2,
    "prompts_per_step": 2,
    "group_size": 2,
    "max_new_tokens": 8,
    "eval_tasks": 3,
    "eval_samples": 4,
    "sft_episodes": 16,
    "sft_steps": 2,
    "sft_batch": 4,
}
"""The ``--smoke`` budget a GRPO-on-a-warm-start driver starts its ``SMOKE`` from."""


def warm_base(args: WarmStartArgs, *, model: str = "tiny", seed: int = 0, steps: int | None = None) -> str:
    """The arms' starting point: ``--model DIR`` as is, else the tiny LM SFT-warmed on oracle demonstrations
    (`sft_warm_start`, cached beside the run directory). ``model``/``seed``/``steps`` build other warm
    starts of the same data (a prefix model)."""
    if args.model != "tiny" and model == "tiny":
        return args.model
    path = sft_warm_start(
        Path(args.out).parent,
        env=args.env,
        env_kw=args.env_kw,
        episodes=args.sft_episodes,
        steps=args.sft_steps if steps is None else steps,
        batch_size=args.sft_batch,
        lr=args.sft_lr,
        seed=seed,
        device=args.device,
        threads=args.threads,
        model=model,
        demonstrator=args.sft_demonstrator,
        induction_steps=args.induction_steps if model == "tiny" else 0,
        micro_batch=args.micro_batch,
    )
    return str(path)


def trace_path(args: ReproArgs, model: str, seed: int) -> Path:
    """Where the evaluation of ``model`` (a checkpoint directory) with task seed ``seed`` writes its
    episodes for `papergym view`: ``OUT/traces/<model path, as a file name>_s<seed>.jsonl``, the path taken
    relative to OUT (an arm's checkpoint) or to its parent (the shared SFT warm start) where it lies there."""
    path = Path(model).resolve()
    out = Path(args.out).resolve()
    for base in (out, out.parent):
        if path.is_relative_to(base):
            path = path.relative_to(base)
            break
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", path.as_posix()).strip("_")[-100:]
    return Path(args.out) / "traces" / f"{name}_s{seed}.jsonl"


def evaluate_model(
    args: WarmStartArgs,
    model: str,
    *,
    tasks: int,
    samples: int,
    seed: int,
    on_episode: Callable[[int, Any], None] | None = None,
    max_turns: int | None = None,
) -> list[Any]:
    """``samples`` attempts (temperature 1) at each of ``tasks`` held-out test tasks of ``args.env``
    (`papergym.reproduce.evaluation.sample_tasks`, which passes every attempt to ``on_episode``;
    ``max_turns`` actions at most per attempt); each
    task's first attempt is recorded step by step at `trace_path`."""
    from papergym.baselines.policy import load_policy
    from papergym.baselines.run import parse_kwargs
    from papergym.reproduce.evaluation import sample_tasks

    policy = load_policy(model, device=args.device)
    policy.model.eval()
    return sample_tasks(
        policy,
        args.env,
        parse_kwargs(args.env_kw),
        tasks=tasks,
        n=samples,
        seed=seed,
        split="test",
        max_new_tokens=args.max_new_tokens,
        family_key=args.family_key,
        trace=trace_path(args, model, seed),
        on_episode=on_episode,
        max_turns=max_turns,
    )


def train_arms(
    job: Callable[[Any], Result],
    configs: Callable[[int], Mapping[str, Any]],
    args: ReproArgs,
    reference: str,
    mechanism: Mapping[str, Sequence[str]],
) -> list[tuple[int, str, Any, Result]]:
    """``(seed, arm, config, job(config))`` for every arm of ``configs(seed)`` (a driver's
    ``arm_configs``), seed by seed over ``args.seeds``. Each seed's arms are checked to differ only in their
    mechanism (`check_arms`) before any trains; the jobs run through `map_jobs` with ``args.workers``
    processes of ``args.threads`` threads (``job``: a module-level function, or a `functools.partial` of one
    binding the driver's args)."""
    runs: list[tuple[int, str, Any]] = []
    for seed in range(args.seeds):
        arms = configs(seed)
        check_arms(arms, reference, mechanism)
        runs += [(seed, arm, config) for arm, config in arms.items()]
    results = map_jobs(job, [config for _, _, config in runs], workers=args.workers, threads=args.threads)
    return [(seed, arm, config, result) for (seed, arm, config), result in zip(runs, results, strict=True)]


def map_jobs(fn: Callable[[Job], Result], jobs: Sequence[Job], *, workers: int, threads: int) -> list[Result]:
    """``[fn(job) for job in jobs]``, in ``workers`` spawned processes when ``workers > 1`` (each with
    ``threads`` torch threads; ``fn`` and the jobs must pickle: a module-level function and dataclasses).
    Every job seeds its own trainer and evaluation, so the results do not depend on ``workers``; the first
    failing job's exception is raised here, after the running ones end."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers == 1 or len(jobs) <= 1:
        return [fn(job) for job in jobs]
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from papergym.baselines.run import set_threads

    context = multiprocessing.get_context("spawn")
    size = min(workers, len(jobs))
    with ProcessPoolExecutor(size, mp_context=context, initializer=set_threads, initargs=(threads,)) as pool:
        return list(pool.map(fn, jobs))


def module(name: str) -> ModuleType:
    """The driver module of reproduction ``name``.

    Raises:
        ValueError: ``name`` is not a planned reproduction, or its driver is not written yet.
    """
    if name not in PLANNED:
        raise ValueError(f"unknown reproduction {name!r}; choose from {', '.join(PLANNED)}")
    try:
        return importlib.import_module(f"papergym.reproduce.{name.replace('-', '_')}")
    except ModuleNotFoundError as exc:
        if exc.name != f"papergym.reproduce.{name.replace('-', '_')}":
            raise
        message = f"reproduction {name!r} has no driver yet (see `papergym reproduce --list`)"
        raise ValueError(message) from exc


def available() -> dict[str, bool]:
    """``{name: whether its driver exists}`` for every planned reproduction."""
    root = Path(__file__).parent
    return {name: (root / f"{name.replace('-', '_')}.py").exists() for name in PLANNED}


def resolve_args(driver: ModuleType, args: ReproArgs, name: str) -> ReproArgs:
    """``args`` with ``--smoke`` overrides applied and the default run directory filled in."""
    if args.smoke:
        args = dataclasses.replace(args, **getattr(driver, "SMOKE", {}))
    if not args.out:
        suffix = "-smoke" if args.smoke else ""
        args = dataclasses.replace(args, out=str(Path("runs") / "reproduce" / f"{name}{suffix}"))
    return args


def differing_fields(a: Any, b: Any) -> set[str]:
    """The fields in which two trainer configs (dataclasses of one type) differ, ``out`` and ``seed`` aside
    (every arm writes its own run directory, and arms are compared seed by seed)."""
    if type(a) is not type(b):
        return {"<type>"}
    ignored = {"out", "seed"}
    return {
        f.name
        for f in dataclasses.fields(a)
        if f.name not in ignored and getattr(a, f.name) != getattr(b, f.name)
    }


def check_arms(configs: Mapping[str, Any], reference: str, mechanism: Mapping[str, Sequence[str]]) -> None:
    """Raise unless every arm's config differs from the reference's in exactly its named mechanism fields.

    ``configs[arm]`` is one trainer config, or a list of stage configs (e.g. ES then GRPO) compared stage
    by stage with the reference's stages of the same trainer type.
    """

    def stages(value: Any) -> list[Any]:
        return list(value) if isinstance(value, (list, tuple)) else [value]

    base = {type(c): c for c in stages(configs[reference])}
    for arm, config in configs.items():
        if arm == reference:
            continue
        changed: set[str] = set()
        for stage in stages(config):
            if type(stage) in base:
                changed |= differing_fields(stage, base[type(stage)])
            else:
                changed.add(type(stage).__module__.rsplit(".", 1)[-1])
        allowed = set(mechanism.get(arm, ()))
        if changed != allowed:
            raise AssertionError(
                f"arm {arm!r} differs from {reference!r} in {sorted(changed)}, expected {sorted(allowed)}"
            )


def sft_warm_start(
    root: Path,
    *,
    env: str,
    env_kw: Sequence[str],
    episodes: int,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    device: str,
    threads: int,
    model: str = "tiny",
    demonstrator: str | None = None,
    induction_steps: int = 0,
    micro_batch: int = 1,
) -> Path:
    """A model SFT-warmed on oracle demonstrations (`papergym.baselines.sft`), cached under ``root``.

    The run directory is ``root/sft-<digest of the settings>``, so reproductions that share a warm start
    (same env, data, budget and seed) train it once; ``device``, ``threads`` and ``micro_batch`` do not
    enter the digest.
    ``demonstrator`` (`papergym.baselines.sft.Args`'s) enters it only when set, so the oracle's warm
    starts keep their directories; so does ``induction_steps`` (> 0: ``model`` is first induction
    pre-trained, `induction_pretrained`, and the SFT starts from that).

    Returns the checkpoint directory (``.../final``).
    """
    settings: list[Any] = [env, list(env_kw), episodes, steps, batch_size, lr, seed, model]
    if demonstrator is not None:
        settings.append(demonstrator)
    if induction_steps > 0:
        settings.append(["induction", induction_steps])
    digest = hashlib.sha256(json.dumps(settings).encode()).hexdigest()[:10]
    out = root / f"sft-{digest}"
    final = out / "final"
    if (final / "config.json").exists():
        logger.info("reusing the SFT warm start in %s", final)
        return final
    from papergym.baselines import sft

    if induction_steps > 0:
        primed = induction_pretrained(
            root, model=model, steps=induction_steps, device=device, threads=threads
        )
        model = str(primed)
    sft.main(
        sft.Args(
            env=env,
            env_kw=list(env_kw),
            model=model,
            out=str(out),
            seed=seed,
            episodes=episodes,
            steps=steps,
            batch_size=batch_size,
            lr=lr,
            progress=False,
            threads=threads,
            device=device,
            demonstrator=demonstrator,
            micro_batch=micro_batch,
        )
    )
    (out / "settings.json").write_text(json.dumps(settings) + "\n")
    return final


def induction_pretrained(root: Path, *, model: str, steps: int, device: str, threads: int) -> Path:
    """``model`` after ``steps`` of `papergym.baselines.induction` (its other settings the defaults, seed 0),
    cached as ``root/induction-<steps>-<digest of model>/final``; returns that checkpoint directory."""
    from papergym.baselines import induction

    digest = hashlib.sha256(model.encode()).hexdigest()[:6]
    out = root / f"induction-{steps}-{digest}"
    final = out / "final"
    if (final / "config.json").exists():
        logger.info("reusing the induction pre-training in %s", final)
        return final
    induction.main(
        induction.Args(model=model, out=str(out), steps=steps, progress=False, device=device, threads=threads)
    )
    return final


def main(name: str, argv: Sequence[str]) -> dict[str, Any]:
    """``papergym reproduce NAME [flags]``: parse the driver's ``Args`` and run it."""
    driver = module(name)
    tyro = require("tyro", "train")
    args = tyro.cli(driver.Args, args=list(argv), prog=f"papergym reproduce {name}")
    args = resolve_args(driver, args, name)
    if args.workers != 1 and not getattr(driver, "PARALLEL", False):
        parallel = [n for n in PLANNED if getattr(module(n), "PARALLEL", False)]
        raise ValueError(
            f"reproduce {name} trains its arms in one process; --workers applies to {', '.join(parallel)}"
        )
    if args.render:
        return render(driver, name, args)
    result: dict[str, Any] = driver.run(args)
    return result


def publish(out: Path, name: str, table: str, write: str | None) -> None:
    """Write a reproduction's section to ``out/table.md`` and, with ``--write``, into that markdown file."""
    from papergym.reproduce.report import write_readme_section

    (out / "table.md").write_text(table + "\n")
    if write:
        write_readme_section(write, name, table)


def render(driver: ModuleType, name: str, args: ReproArgs) -> dict[str, Any]:
    """``--render RESULTS``: the driver's ``section`` of a finished run, written to ``table.md`` beside the
    results (and to ``--write``), with nothing trained or evaluated."""
    from papergym.reproduce.report import read_summary

    if len(inspect.signature(driver.section).parameters) != 1:
        raise ValueError(f"reproduction {name!r} cannot re-render its section from results.json alone")
    if args.render is None:
        raise ValueError("render() needs --render RESULTS.json")
    results = Path(args.render)
    summary = read_summary(results)
    publish(results.parent, name, driver.section(summary), args.write)
    return {**summary, "out": str(results.parent)}
