"""TTRL's majority-vote reward: label-free training signal from a group's agreement.

The majority answer of the group is the pseudo-label; a member is rewarded 1 if its answer equals
it, else 0 (papers/training.md §0.5, TTRL [C: PRIME-RL/TTRL ttrl_utils.py]). Members without a
parsable answer get 0 and do not vote. Answers are compared in the normalised form the env wrote
to ``info["answer"]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from papergym.core import info_keys as K
from papergym.core.trajectory import Trajectory


@dataclass(frozen=True)
class Vote:
    """The outcome of one vote.

    Attributes:
        label: the majority answer, or None when nobody answered.
        ratio: the label's votes over all members (answered or not), TTRL's ``majority_ratio``.
    """

    label: Hashable | None
    ratio: float


def majority_vote(answers: Sequence[Hashable | None]) -> Vote:
    """The most frequent non-None answer; ties go to the answer seen first (deterministic).

    >>> majority_vote(["4", "5", "4", None])
    Vote(label='4', ratio=0.5)
    """
    counts = Counter(a for a in answers if a is not None)
    if not counts:
        return Vote(None, 0.0)
    label, votes = counts.most_common(1)[0]  # most_common keeps first-seen order among ties
    return Vote(label, votes / len(answers))


class MajorityVoteReward:
    """A `GroupReward`: 1.0 for members whose final answer equals the group's majority answer.

    Args:
        n_votes: vote on the first ``n_votes`` members only (TTRL votes on more rollouts than it
            trains on); None: every member votes. Every member is still rewarded.

    `vote_rewards` returns the vote with the rewards (trainers that need the label use it); the
    latest vote is also kept in ``last_vote`` for interactive inspection only.
    """

    def __init__(self, *, n_votes: int | None = None) -> None:
        if n_votes is not None and n_votes < 1:
            raise ValueError(f"n_votes must be >= 1 or None, got {n_votes}")
        self.n_votes = n_votes
        self.last_vote: Vote | None = None

    def __call__(
        self, group: Sequence[Trajectory], *, batch: Sequence[Sequence[Trajectory]] = ()
    ) -> list[float]:
        return self.vote_rewards(group)[0]

    def vote_rewards(self, group: Sequence[Trajectory]) -> tuple[list[float], Vote]:
        """The members' rewards and the vote that produced them (label, majority ratio).

        Args:
            group: the group's trajectories.

        Returns:
            ``(rewards, vote)``: 1.0 / 0.0 per member, and the group's `Vote`.
        """
        answers = [final_answer(t) for t in group]
        vote = majority_vote(answers[: self.n_votes] if self.n_votes else answers)
        self.last_vote = vote
        rewards = [1.0 if vote.label is not None and a == vote.label else 0.0 for a in answers]
        return rewards, vote


def final_answer(trajectory: Trajectory) -> Hashable | None:
    """The normalised answer a trajectory ended with (``info["answer"]`` of its last step)."""
    answer = trajectory.final_info.get(K.ANSWER)
    return answer if isinstance(answer, Hashable) else None
