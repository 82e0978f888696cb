"""The budget of the learned menu policy's reproduction paths (``--policy menu`` of ``papergym reproduce
speechgym`` and ``iapo``): fields mixed into those drivers' Args, and the GRPO config they make."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from papergym.baselines import menu_grpo


@dataclass
class MenuRunArgs:
    """The ``menu_*`` fields of a driver whose ``--policy menu`` trains a menu of
    `papergym.baselines.menu_grpo` (speechgym: retail; iapo: the run's domain)."""

    menu_steps: int = 60
    """GRPO steps per arm of the menu policy."""
    menu_tasks_per_step: int = 8
    """Tasks per menu GRPO step."""
    menu_group_size: int = 8
    """Rollouts per task of the menu policy."""
    menu_lr: float = 0.1
    """The step size on the menu's logits (inferred: Adam's, as the other softmax policies')."""
    menu_optimizer: str = "adam"
    """The menu GRPO's optimizer on its logits (``adam``; ``sgd``: plain gradient descent, which keeps a
    per-turn credit weight's magnitude where Adam normalises it away, `SoftmaxHeads`; it needs a larger
    ``menu_lr``: 1000 on telecom, where 20 learned nothing; benchmarks/README.md)."""
    menu_demos: int = 40
    """Demonstrations of the menu's behaviour-cloning warm start (inferred: a base that succeeds rarely on
    the simulated speech channel, ~4%; ~17% on the clean text channel)."""
    menu_demo_steps: int = 200
    """Behaviour-cloning steps on them."""
    menu_eval_samples: int = 4
    """Sampled episodes per held-out task of the menu's evaluation."""

    def menu_config(self, env: str, env_kw: Sequence[str], seed: int) -> menu_grpo.Args:
        """The menu GRPO config of one (seed, arm) run before its arm's mechanism is set."""
        return menu_grpo.Args(
            env=env,
            env_kw=list(env_kw),
            steps=self.menu_steps,
            tasks_per_step=self.menu_tasks_per_step,
            group_size=self.menu_group_size,
            lr=self.menu_lr,
            optimizer=self.menu_optimizer,
            demos=self.menu_demos,
            demo_steps=self.menu_demo_steps,
            seed=seed,
        )


def menu_policy(args: MenuRunArgs) -> bool:
    """Whether a driver's ``args.policy`` names the menu path (``"menu"``; ``"lm"``: the LM path).

    Raises:
        ValueError: for another policy name, or ``--model DIR`` with the menu (it trains from its own
            warm start).
    """
    policy, model = getattr(args, "policy", "lm"), getattr(args, "model", "tiny")
    if policy not in ("lm", "menu"):
        raise ValueError(f"--policy must be 'lm' or 'menu', got {policy!r}")
    if policy == "menu" and model != "tiny":
        raise ValueError("--policy menu trains the menu policy from its own warm start; it takes no --model")
    return bool(policy == "menu")


MENU_SMOKE = {
    "menu_steps": 2,
    "menu_tasks_per_step": 2,
    "menu_group_size": 2,
    "menu_demos": 2,
    "menu_demo_steps": 2,
    "menu_eval_samples": 1,
}
"""The ``--smoke`` budget of the menu fields."""
