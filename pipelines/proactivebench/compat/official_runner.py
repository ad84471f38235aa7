"""Replay an export in the authors' ``proactivebench`` classes — a program for Python 3.12 only.

Why a separate program: the authors' ``environment.py`` uses 3.12-only f-string syntax, so
benchforge (Python 3.11) cannot import it. ``verify.py`` copies this file as ``runner.py`` into a
temporary directory next to the official ``environment.py`` and ``data_utils.py`` and runs it there
with a 3.12 interpreter::

    python3.12 runner.py <source dir> <export dir> <jobs.json> <out.json>

``jobs[dataset][policy][id]`` lists the answers fed turn by turn. ``out.json`` holds the same
nesting with, per id, the trace of states the class showed (image path relative to the export,
whether it exists, options, prompt, the MCQA prompt ``apply_multi_choice_template`` builds, the
COCO crop box), the reference-setting state, the hint and the class's statistics — or the error
the class raised. Standard library only and nothing from benchforge: it runs in a bare
interpreter.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from collections.abc import Callable
from typing import Any


def load_template(src: str) -> Callable[..., str]:
    """``data_utils.apply_multi_choice_template``, compiled on its own from the syntax tree.

    Importing ``data_utils`` would pull in torch, jsonlines and qwen_vl_utils, none of which the
    one function needs."""
    ns: dict[str, Any] = {}
    with open(os.path.join(src, "data_utils.py"), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "apply_multi_choice_template":
            exec(compile(ast.Module([node], []), "data_utils.py", "exec"), ns)
    return ns["apply_multi_choice_template"]


class Probe:
    """Stands in for a PIL image: records the crop box a state's transform applies."""

    size = (10 ** 6, 10 ** 6)

    def crop(self, box: tuple[float, ...]) -> list[float]:
        return [float(x) for x in box]

    def resize(self, size: tuple[int, int]) -> Probe:
        return self


def describe(state: dict[str, Any], data_dir: str, template: Callable[..., str]) -> dict[str, Any]:
    """What the class shows in ``state``, as JSON."""
    box = state["transform"](Probe())
    return {"image_path": os.path.relpath(state["image_path"], data_dir),
            "exists": os.path.isfile(state["image_path"]),
            "options": state["options"], "prompt": state["prompt"],
            "mcqa": template(question=state["prompt"], options=state["options"], short_answer=True),
            "box": box if isinstance(box, list) else None}


def replay(cls: Any, records: dict[str, dict[str, Any]], sid: str, answers: list[str],
           data_dir: str, template: Callable[..., str]) -> dict[str, Any]:
    """Feed ``answers`` turn by turn to episode ``sid``; any exception (a missing record
    included) is the result, so one broken episode does not hide the others."""
    res: dict[str, Any] = {"trace": [], "error": None, "unfinished": False}
    try:
        ref = cls(entry=records[sid], data_dir=data_dir, reference=True).get_state()
        res["reference"] = describe(ref, data_dir, template)
        env = cls(entry=records[sid], data_dir=data_dir)
        i = 0
        while not env.stop:
            if i >= len(answers):
                res["unfinished"] = True
                break
            res["trace"].append(describe(env.get_state(hint=False), data_dir, template))
            env.evaluate_generated_answer(answers[i])
            i += 1
        res["hint"] = env.hint_prompt
        stats = env.get_statistics()
        res["correct"] = stats["correct_prediction"]
        res["turns"] = stats["num_turns"]
        res["action_evaluations"] = stats["action_evaluations"]
    except Exception as exc:
        res["error"] = f"{type(exc).__name__}: {exc}"
    return res


def main(argv: list[str]) -> None:
    src, data_dir, jobs_path, out_path = argv[:4]
    sys.path.insert(0, src)
    import environment

    template = load_template(src)
    with open(jobs_path, encoding="utf-8") as fh:
        jobs = json.load(fh)
    results: dict[str, dict[str, dict[str, Any]]] = {}
    for dataset, policies in jobs.items():
        with open(os.path.join(data_dir, dataset + "_preprocessed.jsonl"), encoding="utf-8") as fh:
            records = {r["id"]: r for r in map(json.loads, fh)}
        cls = environment.get_environment(dataset)
        for policy, scripts in policies.items():
            for sid, answers in scripts.items():
                res = replay(cls, records, sid, answers, data_dir, template)
                results.setdefault(dataset, {}).setdefault(policy, {})[sid] = res
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(results, fh)


if __name__ == "__main__":
    main(sys.argv[1:])
