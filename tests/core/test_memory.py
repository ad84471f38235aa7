"""core.memory: the heap bound a build sets for itself and the worker processes it starts."""

import os
import subprocess
import sys

from core import memory


def _threshold_in_child(env: dict[str, str]) -> str:
    code = ("import os; from core.memory import bound_heap; "
            "print(bound_heap(), os.environ['MALLOC_MMAP_THRESHOLD_'], os.environ['MALLOC_TRIM_THRESHOLD_'], "
            "os.environ['MALLOC_ARENA_MAX'])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    return out.stdout.strip()


def test_workers_inherit_the_bound_and_a_value_the_user_set_wins() -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in (memory.ENV, memory.TRIM_ENV, memory.ARENA_ENV)}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    assert memory._LIBC is not None  # this machine runs glibc: the bound must apply here
    assert _threshold_in_child(env) == f"True {4 * 2**20} {16 * 2**20} 2"
    assert _threshold_in_child({**env, memory.ENV: "262144"}) == f"True 262144 {16 * 2**20} 2"
    assert _threshold_in_child({**env, memory.TRIM_ENV: "131072"}) == f"True {4 * 2**20} 131072 2"
    assert _threshold_in_child({**env, memory.ARENA_ENV: "4"}) == f"True {4 * 2**20} {16 * 2**20} 4"


_HOLES = """
import os, sys, time
from core import memory
memory.bound_heap() if sys.argv[1] == "trim" else None
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 2**20
held = [bytes(2000) for _ in range(100_000)]  # ~200 MB of heap chunks, far below the mmap bound
top = bytes(2000)  # the heap's top stays in use, so the trim threshold alone returns nothing
before = rss()
del held
time.sleep(2.5)
print(before, rss())
"""


def test_the_periodic_trim_gives_back_freed_chunks_below_the_heap_top() -> None:
    """What the trim threshold cannot do: memory freed in the middle of a heap (a runner's
    finished stage) goes back to the system within a period — and without the trimmer it stays."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    repo = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    figures = {}
    for mode in ("trim", "none"):
        out = subprocess.run([sys.executable, "-c", _HOLES, mode], env=env, capture_output=True,
                             text=True, check=True, cwd=repo)
        figures[mode] = [int(x) for x in out.stdout.split()]
    (held, trimmed), (held_untrimmed, kept) = figures["trim"], figures["none"]
    assert held > 200 and held_untrimmed > 200
    assert held - trimmed > 150  # given back
    assert held_untrimmed - kept < 50  # the same frees without the trimmer stay resident


_ARENAS = """
import sys, threading
from core import memory
memory.bound_heap() if sys.argv[1] == "bound" else None
gate = threading.Barrier(6)
def work():
    gate.wait()  # all six alive at once: a new thread's first malloc takes an arena of its own
    kept = [bytearray(300_000) for _ in range(20)]
    gate.wait()
threads = [threading.Thread(target=work) for _ in range(6)]
for t in threads:
    t.start()
for t in threads:
    t.join()
memory._LIBC.malloc_stats()  # one "Arena N:" block per arena, on stderr
"""


def test_threads_share_two_arenas() -> None:
    """Why the arena bound: each thread that allocates gets an arena of its own (up to eight per
    core), and each arena keeps its own free pages; bounded, six threads share two."""
    env = {k: v for k, v in os.environ.items() if k != memory.ARENA_ENV}
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))
    arenas = {}
    for mode in ("bound", "none"):
        out = subprocess.run([sys.executable, "-c", _ARENAS, mode], env=env, capture_output=True,
                             text=True, check=True, cwd=repo)
        arenas[mode] = out.stderr.count("Arena ")
    assert arenas["bound"] == 2
    assert arenas["none"] > 2
