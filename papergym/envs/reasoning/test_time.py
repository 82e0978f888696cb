"""`papergym/TestTime-v0`: a fixed problem set whose labels never reach the reward."""

from __future__ import annotations

from typing import Any

from papergym.core import info_keys as K
from papergym.core.text_env import ObsMode, TextEnv, Turn
from papergym.envs.reasoning.reasoning_env import ReasoningEnv, canonical_answer


class TestTimeEnv(ReasoningEnv):
    """Test-time RL without labels: a fixed problem set, rewarded on format only.

    ## Description
    The problem set is the first ``n_problems`` test problems of ``domain`` at ``difficulty``
    (the same problems as `ReasoningEnv`'s test split). The env never uses the gold answer for
    its reward and never shows it or the verdict to the agent: training signal must come from a
    `papergym.credit.GroupReward` such as `papergym.credit.MajorityVoteReward` (TTRL) over a
    group's answers. The gold answer appears only in ``info["hidden_label"]`` and in
    ``info["success"]``, for evaluation; no GroupReward or trainer may read them.

    ## Observation
    As `ReasoningEnv`; the final text is "Answer recorded." whatever the answer.

    ## Action
    A ``str``, the whole completion.

    ## Reward
    ``format`` only: 0.0 when an answer was found, ``-format_penalty`` when none was.

    ## Episode End
    Terminates after the first action.

    ## Arguments
    - ``domain``: the reasoning domain (default ``"math"``).
    - ``n_problems``: the size of the fixed set (default 64, inferred: a small test set, as in
      TTRL's AIME-sized benchmarks).
    - ``difficulty``: the level of every problem (default 2).
    - ``obs_mode``, ``render_mode``, ``format_penalty``: see `TextEnv`.

    ## Paper
    TTPO, label-free test-time policy optimization (papers/training.md §4), on TTRL's
    majority-vote setting (§0.5).

    ## Version History
    - v0: initial version.

    >>> import gymnasium as gym, papergym
    >>> env = gym.make("papergym/TestTime-v0")
    >>> obs, info = env.reset(seed=0)
    >>> _, reward, _, _, info = env.step("\\\\boxed{7}")
    >>> reward, "hidden_label" in info
    (0.0, True)
    """

    __test__ = False  # not a pytest test class, despite its name

    def __init__(
        self,
        domain: str = "math",
        *,
        n_problems: int = 64,
        difficulty: int = 2,
        obs_mode: ObsMode = "text",
        render_mode: str | None = None,
        format_penalty: float = 0.1,
    ) -> None:
        if not isinstance(difficulty, int):
            raise ValueError(f"TestTime uses one fixed difficulty (an int), got {difficulty!r}")
        self._configure((domain,), difficulty, {"test": n_problems})
        TextEnv.__init__(self, obs_mode=obs_mode, render_mode=render_mode, format_penalty=format_penalty)
        self.n_problems = n_problems

    def _verdict(self, info: dict[str, Any]) -> Turn:
        # The verdict stays out of the observation, the reward and `checks`: only `success` and
        # `hidden_label` carry it, for evaluation.
        info[K.HIDDEN_LABEL] = canonical_answer(self.problem.answer)
        info[K.CHECKS] = {"format": True}
        return Turn("Answer recorded.", {"format": 0.0}, terminated=True, info=info)

    def _act(self, action: str) -> Turn:
        turn = super()._act(action)
        if turn.info.get(K.INVALID_ACTION):
            # No answer: the reward is the format penalty alone, and the label still goes to info.
            info = {
                **turn.info,
                K.HIDDEN_LABEL: canonical_answer(self.problem.answer),
                K.CHECKS: {"format": False},
            }
            return Turn(turn.text, {"format": -self.format_penalty}, terminated=True, info=info)
        return turn


CONTRACT_VARIANTS: list[dict[str, Any]] = [{}, {"domain": "code", "n_problems": 32}]
