"""Environment graphs: which options each state shows and where they lead (ProactiveBench App. 0.A).

State ``s`` always shows frame ``s``; what differs between environments is the transition rule:

* ROD (App. 0.A.1) and VSOD (App. 0.A.2) are circular: moving the occluder / waiting past the
  last frame wraps around to the first, rewinding at the first frame returns the last.
* MVP-N, ImageNet-C and QuickDraw (App. 0.A.3–0.A.5) are linear: the valid suggestion moves one
  frame towards the reference; once the reference is shown, a further suggestion ends the
  episode ("further proactive suggestions result in terminating the evaluation", App. 0.A.4).
* ChangeIt (App. 0.A.6) is linear in both directions; rewind is disabled at the first frame
  and waiting is disabled at the last one.
* COCO (App. 0.A.7) is a line of crops for cardinal moves and zooming out, and a grid for
  ordinal moves, where a cardinal direction disappears once all its steps are explored. On a
  line the move option is hidden at the last crop, as the authors' ``COCO2014Environment``
  does (the paper says the set "remains fixed" there; the release is evaluated with that class,
  so we follow it — the option could only end the episode).

``max_steps`` follows the authors' package: the number of turns (suggestions and the final
answer) after which the episode fails.
"""

from __future__ import annotations

from dataclasses import dataclass

END = -1  # next state of an option that ends the episode as wrong


@dataclass(frozen=True)
class Graph:
    """Per state: shown option ids (into the episode's ``options``) and their next states."""

    option_ids: list[list[int]]
    next_states: list[list[int]]
    max_steps: int


def build_graph(
    environment: str,
    num_frames: int,
    option_kinds: list[str],
    option_actions: list[str],
    metadata: dict,
) -> Graph:
    """Build the state graph of one episode.

    ``option_kinds``/``option_actions`` describe the episode's option group in its final
    (shuffled) order. Abstain and invalid suggestions are shown in every state and end the
    episode; proactive options follow the environment's transition rule.
    """
    n = num_frames
    ends = [i for i, kind in enumerate(option_kinds) if kind != "proactive"]
    proactive = [i for i, kind in enumerate(option_kinds) if kind == "proactive"]

    def moves_for(state: int) -> dict[int, int]:
        """Proactive option id -> next state (absent = option not shown in this state)."""
        moves: dict[int, int] = {}
        for i in proactive:
            action = option_actions[i]
            nxt = _next_state(environment, action, state, n, metadata)
            if nxt is not None:
                moves[i] = nxt
        return moves

    option_ids: list[list[int]] = []
    next_states: list[list[int]] = []
    for state in range(n):
        moves = moves_for(state)
        shown = [i for i in range(len(option_kinds)) if i in moves or i in ends]
        option_ids.append(shown)
        next_states.append([moves.get(i, END) for i in shown])
    return Graph(option_ids, next_states, _max_steps(environment, n, metadata))


def _next_state(environment: str, action: str, state: int, n: int, metadata: dict) -> int | None:
    """Where ``action`` leads from ``state``; ``None`` hides the option, END terminates."""
    last = n - 1
    if environment == "rod":  # App. 0.A.1: circular; earlier frames = occluder shifted left
        return (state - 1) % n if action == "left" else (state + 1) % n
    if environment == "vsod":  # App. 0.A.2: circular in time
        return (state - 1) % n if action == "rewind" else (state + 1) % n
    if environment in ("mvpn", "imagenet_c", "quickdraw"):
        return state + 1 if state < last else END
    if environment == "changeit":  # App. 0.A.6: rewind disabled at the first frame
        if action == "rewind":
            return state - 1 if state > 0 else None
        return state + 1 if state < last else None
    if environment == "coco":
        return _coco_next(action, state, n, metadata)
    raise ValueError(f"unknown environment {environment!r}")


def _coco_next(action: str, state: int, n: int, metadata: dict) -> int | None:
    steps = int(metadata["steps"])
    if metadata["layout"] == "line":  # cardinal / zoom out: hidden at the last crop (official)
        return state + 1 if state < steps else None
    # grid: frame = a * (steps + 1) + b; a counts moves along the first component (up/down),
    # b along the second (left/right). An exhausted direction is removed (App. 0.A.7).
    a, b = divmod(state, steps + 1)
    first, _second = str(metadata["direction"]).split("_")
    if action == first:
        return (a + 1) * (steps + 1) + b if a < steps else None
    return a * (steps + 1) + b + 1 if b < steps else None


def _max_steps(environment: str, n: int, metadata: dict) -> int:
    if environment == "coco":
        # line: K moves + the answer (at the last crop only abstain/categories remain, so an
        # always-proactive policy abstains on turn K+1); grid: K moves per component + answer
        steps = int(metadata["steps"])
        return (2 * steps if metadata["layout"] == "grid" else steps) + 1
    return n  # one turn per frame, as in the authors' package (max_steps = num_images)
