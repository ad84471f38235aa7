"""core.memory: the heap bound a build sets for itself and the worker processes it starts."""

import os
import subprocess
import sys

from core import memory


def _threshold_in_child(env: dict[str, str]) -> str:
    code = ("import os; from core.memory import bound_heap; "
            "print(bound_heap(), os.environ['MALLOC_MMAP_THRESHOLD_'], os.environ['MALLOC_TRIM_THRESHOLD_'])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    return out.stdout.strip()


def test_workers_inherit_the_bound_and_a_value_the_user_set_wins() -> None:
    env = {k: v for k, v in os.environ.items() if k not in (memory.ENV, memory.TRIM_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    assert memory._LIBC is not None  # this machine runs glibc: the bound must apply here
    assert _threshold_in_child(env) == f"True {4 * 2**20} {16 * 2**20}"
    assert _threshold_in_child({**env, memory.ENV: "262144"}) == f"True 262144 {16 * 2**20}"
    assert _threshold_in_child({**env, memory.TRIM_ENV: "131072"}) == f"True {4 * 2**20} 131072"

