"""The GRPO reward of ProactiveBench §5, as a reward function TRL's ``GRPOTrainer`` calls directly.

§5: each sampled answer is rewarded "via the following rule: r_c = 1, if the answer corresponds
to the correct category, r_p ∈ {0.5, 0.75, 1.0}, if it is a valid proactive suggestion, and
r_w = 0 otherwise" — with r_p < r_c the model should "prioritize class predictions and revert to
proactive suggestions when uncertain".

How an answer is read: exactly as the official MCQA evaluation reads it (the port of the
authors' ``_evaluate`` in :mod:`filtering.parsing`): the option's text (any case and spacing, a
leading ``"B. "`` dropped) or its letter, against the row's ``options`` in letter order. Then

* the row's ``ground_truth`` → ``r_c``;
* one of the row's ``proactive_actions`` (the suggestions that lead to a more informative frame in
  this frame; none where the answer is visible) → ``r_p``;
* anything else — a wrong category, the abstain option, a suggestion that is not valid in this
  frame, text that matches no option → ``r_w``.

The call convention is TRL's: ``GRPOTrainer`` calls ``reward(prompts=…, completions=…, **kwargs)``
with one value per completion in every list, ``kwargs`` holding every other dataset column (and
TRL's own extras such as ``completion_ids``); a conversational completion is a list of messages.
So ``reward(prompts, completions, **kwargs) -> list[float]`` reads ``ground_truth``,
``proactive_actions`` and ``options`` from ``kwargs`` and ignores the rest. Standard library only
(with :mod:`filtering.parsing`), so a training script needs nothing else of benchforge.

    from pipelines.proactivebench.rewards import proactive_reward
    trainer = GRPOTrainer(model=…, reward_funcs=proactive_reward(r_p=0.75), train_dataset=train)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from filtering.parsing import evaluate

R_C = 1.0  # the correct category
R_W = 0.0  # anything else
PAPER_R_P = (0.5, 0.75, 1.0)  # the proactive rewards §5 trains with (Table 3)
COLUMNS = ("ground_truth", "proactive_actions", "options")

RewardFunction = Callable[..., list[float]]


def completion_text(completion: Any) -> str:
    """The answer text of one completion: a string as it is; a conversational completion (a
    list of messages) → its last message's content, whose parts' texts are joined when the
    content is a list of ``{"type": "text", "text": …}`` parts."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], dict):
        content = completion[-1].get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, Sequence):
            return "".join(str(p.get("text") or "") for p in content
                           if isinstance(p, dict) and p.get("type", "text") == "text")
    raise TypeError(f"a completion is a string or a list of messages, not {type(completion).__name__}")


def score(answer: str, ground_truth: str, proactive_actions: Sequence[str], options: Sequence[str],
          r_p: float) -> float:
    """The reward of one answer to one training row (module doc)."""
    opts = list(options)
    missing = [a for a in [ground_truth, *proactive_actions] if a not in opts]
    if missing:
        raise ValueError(f"ground_truth / proactive_actions {missing} are not among the options {opts}")
    if evaluate(answer, [ground_truth], opts, 0)[0] == "correct":
        return R_C
    if proactive_actions and evaluate(answer, list(proactive_actions), opts, 0)[0] == "correct":
        return r_p
    return R_W


def proactive_reward(r_p: float = 0.75) -> RewardFunction:
    """The §5 reward with proactive reward ``r_p`` (the paper trains with 0.5, 0.75 and 1.0; it
    must lie in [r_w, r_c] = [0, 1]) as a TRL reward function named ``proactive_reward_rp<r_p>``
    (TRL logs each reward function under its ``__name__``)."""
    if isinstance(r_p, bool) or not isinstance(r_p, int | float) or not R_W <= r_p <= R_C:
        raise ValueError(f"r_p must be a number in [{R_W}, {R_C}] (the paper: {PAPER_R_P}), got {r_p!r}")
    value = float(r_p)

    def reward(prompts: Sequence[Any], completions: Sequence[Any], **kwargs: Any) -> list[float]:
        missing = [c for c in COLUMNS if c not in kwargs]
        if missing:
            raise KeyError(f"the reward needs the training split's columns {list(COLUMNS)}; "
                           f"missing {missing} (kwargs: {sorted(kwargs)})")
        cols = [list(kwargs[c]) for c in COLUMNS]
        for name, col in zip(("prompts", *COLUMNS), [list(prompts), *cols], strict=True):
            if len(col) != len(completions):
                raise ValueError(f"{name}: {len(col)} values for {len(completions)} completions")
        return [score(completion_text(c), gt, actions, opts, value)
                for c, gt, actions, opts in zip(completions, *cols, strict=True)]

    reward.__name__ = reward.__qualname__ = f"proactive_reward_rp{value:g}"
    return reward
