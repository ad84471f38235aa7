"""Replay every episode with scripted policies before it may enter a release.

The episode record is an environment (ProactiveBench §3.1: states, valid actions, transitions,
termination). Three policies catch construction bugs that no schema check sees:

* **oracle** — shortest path of valid proactive actions to a goal state, then the correct
  category: must succeed, else the reference is unreachable within ``max_steps``;
* **always-abstain** — must score 0 (the abstain option never counts as correct);
* **always-proactive** — keeps suggesting; must never be scored correct and must end exactly
  at ``max_steps`` (otherwise ``max_steps`` and the graph disagree).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from pipelines.proactivebench.graph import END


@dataclass(frozen=True)
class Outcome:
    correct: bool
    turns: int
    states: list[int]


class Replay:
    """Minimal environment runner over an EPISODE record (same rules as the release format)."""

    def __init__(self, episode: dict[str, Any]) -> None:
        self.ep = episode
        self.states = episode["states"]

    def shown(self, state: int) -> list[tuple[int, int]]:
        s = self.states[state]
        return list(zip(s["option_ids"], s["next_states"], strict=True))

    def run(self, policy) -> Outcome:
        """``policy(state, shown) -> ("option", option_id) | ("category", text)``."""
        state = self.ep["start_state"]
        visited = [state]
        for turn in range(1, self.ep["max_steps"] + 1):
            kind, value = policy(state, self.shown(state))
            if kind == "category":
                ok = value == self.ep["answer"] and state not in self.ep["void_states"]
                return Outcome(ok, turn, visited)
            nxt = dict(self.shown(state)).get(value)
            if nxt is None:
                raise ValueError(f"policy chose option {value} not shown in state {state}")
            if nxt == END or turn == self.ep["max_steps"]:
                return Outcome(False, turn, visited)
            state = nxt
            visited.append(state)
        return Outcome(False, self.ep["max_steps"], visited)

    def shortest_path(self) -> list[int] | None:
        """Option ids of a shortest proactive path from the start to a usable goal state."""
        goals = set(self.ep["goal_states"]) - set(self.ep["void_states"])
        start = self.ep["start_state"]
        prev: dict[int, tuple[int, int] | None] = {start: None}
        queue = deque([start])
        while queue:
            state = queue.popleft()
            if state in goals:
                path: list[int] = []
                while prev[state] is not None:
                    state, option = prev[state]  # type: ignore[misc]
                    path.append(option)
                return path[::-1]
            for option, nxt in self.shown(state):
                if nxt != END and self.ep["option_kinds"][option] == "proactive" and nxt not in prev:
                    prev[nxt] = (state, option)
                    queue.append(nxt)
        return None


def self_check(episode: dict[str, Any]) -> str | None:
    """Return ``None`` when all three policies behave, else the reason for rejection."""
    replay = Replay(episode)
    kinds = episode["option_kinds"]
    path = replay.shortest_path()
    if path is None:
        return "oracle: no goal state reachable from the start state"
    steps = iter(path)

    def oracle(_state, _shown):
        option = next(steps, None)
        return ("option", option) if option is not None else ("category", episode["answer"])

    out = replay.run(oracle)
    if not out.correct:
        return f"oracle: needs {len(path) + 1} turns but max_steps is {episode['max_steps']}"

    def abstain(_state, shown):
        for option, _ in shown:
            if kinds[option] == "abstain":
                return ("option", option)
        raise ValueError("no abstain option shown")

    try:
        out = replay.run(abstain)
    except ValueError as exc:
        return f"always-abstain: {exc} in state {episode['start_state']}"
    if out.correct:
        return "always-abstain: scored correct"

    def proactive(_state, shown):
        for option, _ in shown:
            if kinds[option] == "proactive":
                return ("option", option)
        return abstain(_state, shown)

    out = replay.run(proactive)
    if out.correct or out.turns != episode["max_steps"]:
        return (
            f"always-proactive: ended after {out.turns} turns, expected {episode['max_steps']} "
            "(max_steps disagrees with the graph)"
        )
    return None
