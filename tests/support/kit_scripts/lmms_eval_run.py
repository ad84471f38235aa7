"""Run exported benchforge tasks in lmms-eval with a scripted model (run with the lmms-eval kit's
interpreter: ``lmms_eval_run.py <include_path> <scripts.json> <out.json>``).

The scripted model answers request k of a document with ``scripts[task][doc id][k]`` ("" once the
script runs out) and logs what lmms-eval showed it: the prompt and the sha256 of the pixels of
every visual. Tasks are listed with lmms-eval's own task registry (``TaskManager`` over the
include path only) and run with ``lmms_eval.evaluator.simple_evaluate``; the answer is JSON:
the registry's task list, ``results`` as lmms-eval reports them, and the model's log.
"""

import hashlib
import json
import sys
from collections import defaultdict

from lmms_eval.api.model import lmms
from lmms_eval.evaluator import simple_evaluate
from lmms_eval.tasks import TaskManager


def _pixels(visual):
    return hashlib.sha256(visual.convert("RGB").tobytes()).hexdigest()


class ScriptedModel(lmms):
    """A model that says what the test scripted, in order, per document."""

    def __init__(self, scripts):
        super().__init__()
        self.scripts = scripts
        self.calls = defaultdict(int)
        self.log = defaultdict(list)

    def generate_until(self, requests):
        out = []
        for request in requests:
            context, _kwargs, doc_to_visual, doc_id, task, split = request.args
            doc = self.task_dict[task][split][doc_id]
            visuals = doc_to_visual(doc) or []
            key = (task, doc["id"])
            k = self.calls[key]
            self.calls[key] += 1
            script = self.scripts.get(task, {}).get(doc["id"], [])
            answer = script[k] if k < len(script) else ""
            self.log[f"{task}|{doc['id']}"].append(
                {"prompt": context, "visuals": [_pixels(v) for v in visuals], "answer": answer})
            out.append(answer)
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError("benchforge tasks only generate")

    def generate_until_multi_round(self, requests):
        raise NotImplementedError("benchforge tasks use generate_until_agentic")


def main(include_path, scripts_path, out_path):
    with open(scripts_path) as fh:
        scripts = json.load(fh)
    manager = TaskManager(include_path=include_path, include_defaults=False)
    listed = sorted(manager.all_tasks)
    model = ScriptedModel(scripts)
    results = simple_evaluate(model=model, tasks=sorted(scripts), task_manager=manager,
                              bootstrap_iters=0, log_samples=False)
    with open(out_path, "w") as fh:
        json.dump({"listed": listed, "results": results["results"], "log": model.log}, fh, default=str)


if __name__ == "__main__":
    main(*sys.argv[1:4])
