from __future__ import annotations

import gymnasium as gym
import pytest

import papergym  # noqa: F401  (registers the ids)
from papergym.core import info_keys as K

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from papergym.baselines.policy import completion_logits, completion_logprobs, sample  # noqa: E402
from papergym.baselines.rollout import demonstrations, run_episodes  # noqa: E402


def test_sample_is_seeded_records_logprobs_and_forces_tokens(tiny_policy) -> None:
    p = tiny_policy
    prompt = p.encode_chat([{"role": "user", "content": "Calculate 2 + 3."}])
    eos = p.tokenizer.eos_token_id
    forced = [[5, 6], None, [7, 8, eos], None]
    state = torch.random.get_rng_state()
    a = sample(p, [prompt, prompt[:6]], seed=1, num_samples=2, max_new_tokens=12, forced=forced,
               return_entropy=True)  # fmt: skip
    b = sample(p, [prompt, prompt[:6]], seed=1, num_samples=2, max_new_tokens=12, forced=forced)
    c = sample(p, [prompt, prompt[:6]], seed=2, num_samples=2, max_new_tokens=12, forced=forced)
    assert torch.equal(state, torch.random.get_rng_state())  # no global seeding
    assert a.tokens == b.tokens and a.tokens != c.tokens
    assert a.tokens[0][:2] == [5, 6] and a.tokens[2] == [7, 8, eos] and a.finished[2]
    assert a.forced == [2, 0, 3, 0] and [len(t) for t in a.tokens] == [12, 12, 3, 12]
    prompts = [prompt, prompt, prompt[:6], prompt[:6]]
    logp, mask = completion_logprobs(p, prompts, a.tokens)
    sampled = torch.zeros_like(logp)
    for i, row in enumerate(a.logprobs):
        sampled[i, : len(row)] = torch.tensor(row)
    assert mask.sum() == sum(len(t) for t in a.tokens)
    assert torch.allclose(logp, sampled, atol=1e-4)  # temperature 1: sampling log-probs are the model's
    logits, _ = completion_logits(p, prompts, a.tokens)
    index = torch.tensor([t + [0] * (12 - len(t)) for t in a.tokens])
    assert torch.allclose(torch.log_softmax(logits, -1).gather(-1, index[..., None]).squeeze(-1) * mask, logp,
                          atol=1e-4)  # fmt: skip
    _, entropy, _ = completion_logprobs(p, prompts, a.tokens, return_entropy=True)
    assert torch.allclose(entropy[0, :12], torch.tensor(a.entropies[0]), atol=1e-4)
    greedy = sample(p, [prompt], seed=0, temperature=0.0, max_new_tokens=5)
    assert greedy.tokens == sample(p, [prompt], seed=9, temperature=0.0, max_new_tokens=5).tokens


def _oracle_script(policy, envs):
    eos = policy.tokenizer.eos_token_id

    def forced(i, turn, observation):
        return [*policy.encode(envs[i].unwrapped.oracle_action()), eos]

    return forced


def test_multi_turn_episode_keeps_model_tokens_and_masks_env_tokens(tiny_policy) -> None:
    p = tiny_policy
    envs = [gym.make("papergym/SearchCritic-v0", n_passages=2000) for _ in range(2)]
    oracle = _oracle_script(p, envs)

    def forced(i, turn, observation):  # member 0 follows the oracle; member 1 samples after a forced prefix
        return oracle(i, turn, observation) if i == 0 else p.encode("<think>")

    episodes = run_episodes(
        p, envs, seeds=[3, 3], sample_seed=0, max_new_tokens=96, max_turns=3, forced=forced
    )
    scripted, sampled = episodes
    assert scripted.trajectory.success and len(scripted.trajectory.steps) >= 3
    assert any(s.info.get(K.TOOL_RESULTS) for s in scripted.trajectory.steps)  # the search tool ran
    segment = scripted.segments[0]
    assert (
        len(segment.token_ids) == len(segment.loss_mask) == len(segment.forced_mask) == len(segment.logprobs)
    )
    covered = [0] * len(segment.token_ids)
    for span, step in zip(scripted.spans, scripted.trajectory.steps, strict=True):
        tokens = segment.token_ids[span.start : span.end]
        assert p.decode(tokens) == step.action and tokens[-1] == p.tokenizer.eos_token_id
        covered[span.start : span.end] = [1] * span.length
    assert segment.loss_mask == [0] * len(covered)  # forced tokens are masked by default
    assert segment.forced_mask == covered
    # the context is exactly what the chat template renders for this conversation
    messages = [{"role": "user", "content": scripted.trajectory.steps[0].observation}]
    for step, nxt in zip(scripted.trajectory.steps, scripted.trajectory.steps[1:], strict=False):
        messages += [
            {"role": "assistant", "content": step.action},
            {"role": "user", "content": nxt.observation},
        ]
    text = p.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    last = scripted.spans[-1]
    assert p.tokenizer.decode(segment.token_ids[: last.start]) == text
    # the sampled member: its own tokens in the loss, the forced "<think>" and env tokens out
    seg = sampled.segments[0]
    k = len(p.encode("<think>"))
    for span in sampled.spans:  # every action starts with the forced "<think>", then the model's own tokens
        assert seg.forced_mask[span.start : span.end] == [1] * k + [0] * (span.length - k)
        assert seg.token_ids[span.start : span.start + k] == p.encode("<think>")
    own = sum(s.length for s in sampled.spans) - sum(seg.forced_mask)
    assert sum(seg.loss_mask) == own > 0
    assert sampled.action_lengths == [s.length for s in sampled.spans]
    values = sampled.token_values([float(i + 1) for i in range(len(sampled.spans))])
    for i, span in enumerate(sampled.spans):
        assert set(values[0][span.start : span.end]) == {float(i + 1)}
    assert sum(1 for v in values[0] if v) == sum(s.length for s in sampled.spans)


def test_context_reset_starts_a_new_segment_and_demonstrations_mark_actions(tiny_policy) -> None:
    p = tiny_policy
    kwargs = {
        "kind": "manual",
        "pages": (3, 4),
        "evidence_only": True,
        "memory_unit": "tokens",
        "memory_limit": 64,
    }
    env = gym.make("papergym/MemoryQA-v0", **kwargs)
    (episode,) = demonstrations(p, [env], seeds=[0])
    steps = episode.trajectory.steps
    assert episode.trajectory.success and len(steps) >= 2
    assert len(episode.segments) == len(steps)  # every step resets the context
    assert [s.segment for s in episode.spans] == list(range(len(steps)))
    for span, step in zip(episode.spans, steps, strict=True):
        seg = episode.segments[span.segment]
        assert seg.loss_mask[span.start : span.end] == [1] * span.length
        assert sum(seg.loss_mask) == span.length
        assert p.decode(seg.token_ids[span.start : span.end]) == step.action


def test_token_logprobs_at_kept_positions_match_the_full_head_values_and_gradients(tiny_policy) -> None:
    from papergym.baselines.policy import pad_right, token_logprobs

    p = tiny_policy
    rows = [p.encode("Calculate 2 + 3. The answer is 5."), p.encode("Hi there")]
    ids, attn = pad_right(rows, p.pad_id)
    keep = torch.zeros_like(attn)
    keep[0, 4:9] = 1
    keep[1, 1:3] = 1
    keep[1, -1] = 1  # a padding position: never kept
    results = []
    for k in (None, keep):
        p.model.zero_grad(set_to_none=True)
        logp, entropy = token_logprobs(p.model, ids, attn, temperature=0.7, return_entropy=True, keep=k)
        (logp * keep).sum().backward()
        grad = p.model.get_output_embeddings().weight.grad.clone()
        results.append((logp * keep, entropy * keep, grad))
    (full_lp, full_h, full_g), (kept_lp, kept_h, kept_g) = results
    assert len(rows[1]) < ids.shape[1]
    assert torch.count_nonzero(kept_lp) == int((keep * attn)[:, 1:].sum())  # padding comes back 0
    assert torch.allclose(full_lp, kept_lp, atol=1e-5) and torch.allclose(full_h, kept_h, atol=1e-5)
    assert torch.allclose(full_g, kept_g, atol=1e-5)
