"""R-Zero's challenger uncertainty reward, used by the self-play env and by `papergym.credit.rzero`.

It lives in the env package (not in ``credit/``) because the env scores its challenger with it, and envs sit
below credit in the import order (DESIGN.md §Layout).
"""

from __future__ import annotations


def uncertainty_reward(p_hat: float) -> float:
    """R-Zero's ``1 - 2|p̂ - 0.5|`` (papers/training.md §1.3, arXiv 2508.05004).

    Args:
        p_hat: the share of the solver's answers that agree (with each other or the reference), in [0, 1].

    Returns:
        1 at ``p_hat = 0.5``, falling linearly to 0 at 0 and 1.

    Raises:
        ValueError: ``p_hat`` is outside [0, 1].

    >>> uncertainty_reward(0.5), uncertainty_reward(0.2), uncertainty_reward(1.0)
    (1.0, 0.4, 0.0)
    """
    if not 0.0 <= p_hat <= 1.0:
        raise ValueError(f"p_hat must be in [0, 1], got {p_hat}")
    return round(1.0 - 2.0 * abs(p_hat - 0.5), 12)
