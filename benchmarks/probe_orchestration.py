"""Benchmark: leak-filter probe orchestration against the local protocol server.

Why: with hundreds of thousands of first-turn requests (22 models × ~18k samples, ProactiveBench
App. 0.A.8) the orchestrator must keep ``concurrency`` requests in flight at all times; anything
less multiplies a multi-hour run. The server answers every request after a fixed latency, so the
ideal wall time is ``N × latency / concurrency``; we print achieved / ideal (1.0 is perfect;
event-loop, client and HTTP overhead make it larger). An immediate re-run must send 0 requests
(everything comes from the persistent response cache).

On these 2-core machines the real SDKs cost ≈2 ms of client CPU per request (request
transformation, pydantic, httpx), so with short latencies one event loop is CPU-bound; the
benchmark prints that floor too. The test server runs in a child process so its threads do not
share the client's GIL.

Run: ``.venv/bin/python benchmarks/probe_orchestration.py [--n 400 --latency 0.1
--concurrency 16 --backend openai|gemini]``.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from PIL import Image  # noqa: E402

from filtering.leak import LeakFilter, LeakFilterConfig  # noqa: E402
from tests.support.protocol_server import ProtocolServer  # noqa: E402


def episode(i: int) -> dict[str, Any]:
    """A minimal first state: unique image and prompt per sample (so nothing is cached)."""
    buf = io.BytesIO()
    Image.new("RGB", (32, 32), (i % 256, (i // 256) % 256, 77)).save(buf, format="PNG")
    cats = ["dog", "cat", "fox", "owl"]
    return {
        "id": f"bench/{i}",
        "environment": "bench",
        "frames": [{"bytes": buf.getvalue(), "path": f"{i}.png"}],
        "states": [{"frame": 0, "option_ids": [0], "next_states": [-1]}],
        "start_state": 0,
        "void_states": [],
        "options": ["Move the camera left."],
        "categories": cats,
        "answer": cats[i % 4],
        "hint": "",
        "first_turn_prompt": f"[{i}] What is this? Options: A. Move the camera left. "
        + " ".join(f"{chr(66 + j)}. {c}" for j, c in enumerate(cats)),
    }


def _serve(latency: float, conn: Any) -> None:
    """Child process: run the server, report its port, answer request-count queries."""
    with ProtocolServer(latency_s=latency) as server:
        conn.send(server.port)
        while True:
            cmd = conn.recv()
            if cmd == "count":
                conn.send(server.count())
            elif cmd == "reset":
                server.reset_log()
                conn.send(True)
            else:
                return


class RemoteServer:
    """The protocol server in its own process, so its threads do not compete with the client
    for the GIL: the measurement is then about the orchestrator, not the test server."""

    def __init__(self, latency: float) -> None:
        import multiprocessing as mp

        self.conn, child = mp.Pipe()
        self.proc = mp.get_context("fork").Process(target=_serve, args=(latency, child), daemon=True)
        self.proc.start()
        self.port = self.conn.recv()
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.openai_base_url = f"{self.base_url}/v1"

    def count(self) -> int:
        self.conn.send("count")
        return int(self.conn.recv())

    def reset_log(self) -> None:
        self.conn.send("reset")
        self.conn.recv()

    def close(self) -> None:
        self.conn.send("stop")
        self.proc.join(5)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--backend", choices=["openai", "gemini"], default="openai")
    args = ap.parse_args(argv)

    episodes = [episode(i) for i in range(args.n)]
    server = RemoteServer(args.latency)
    with tempfile.TemporaryDirectory() as tmp:
        base = server.openai_base_url if args.backend == "openai" else server.base_url
        cfg = LeakFilterConfig.from_dict(
            {
                "leak_filter": {"unresolved_policy": "reject", "cache_dir": tmp, "progress": True},
                "backends": {args.backend: {"concurrency": args.concurrency, "timeout_s": 30}},
                "probes": [{"backend": args.backend, "model": "bench-model", "base_url": base}],
            }
        )
        # Warm-up (not timed, not counted): first use of the SDKs imports modules and builds
        # pydantic models, a one-off cost of the process rather than of the orchestration.
        LeakFilter(cfg).probe([episode(args.n + i) for i in range(args.concurrency)])
        server.reset_log()
        t0, c0 = time.perf_counter(), time.process_time()
        LeakFilter(cfg).probe(episodes)
        achieved = time.perf_counter() - t0
        cpu = time.process_time() - c0
        first_requests = server.count()
        ideal = args.n * args.latency / args.concurrency
        server.reset_log()
        t1 = time.perf_counter()
        LeakFilter(cfg).probe(episodes)
        rerun = time.perf_counter() - t1
        print(
            f"backend={args.backend} N={args.n} latency={args.latency * 1000:.0f}ms "
            f"concurrency={args.concurrency}"
        )
        print(
            f"first run: {first_requests} requests in {achieved:.2f}s; "
            f"ideal N*latency/concurrency = {ideal:.2f}s; achieved/ideal = "
            f"{achieved / ideal:.2f}"
        )
        floor = max(ideal, cpu)
        print(
            f"client CPU {1000 * cpu / args.n:.1f} ms/request (SDK + orchestration, one "
            f"event loop): CPU-bound floor max(ideal, CPU) = {floor:.2f}s; achieved/floor = "
            f"{achieved / floor:.2f}"
        )
        print(f"immediate re-run: {server.count()} requests in {rerun:.2f}s (from cache)")
    server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
