"""Benchmark: leak-filter probe orchestration against the local protocol server.

Why: with hundreds of thousands of first-turn requests (22 models × ~18k samples, ProactiveBench
App. 0.A.8) the client layer must keep ``concurrency`` requests in flight at all times; anything
less multiplies a multi-hour run. The server answers every request after a fixed latency, so the
ideal wall time is ``N × latency / concurrency``; we print achieved / ideal (1.0 is perfect).

Two baselines measured in the same run say where the rest of the time goes:

- **bare SDK**: the same SDK call (``chat.completions.create`` / ``aio.models.generate_content``)
  N times under an ``asyncio.Semaphore(concurrency)``, with no cache, retry, progress or parsing —
  what the SDK and the server cost by themselves;
- **client CPU**: the CPU time of the process per request; when N × CPU approaches the ideal
  time, one event loop is CPU-bound and no orchestration can reach 1.0.

An immediate rerun must send 0 requests (everything comes from the persistent response cache).
The server answers ``latency`` after each request's arrival (its own parsing counts towards the
latency, and the reply leaves in one write), for both our layer and the bare-SDK baseline.
The server runs in a child process (:func:`tests.support.protocol_server.serve_in_subprocess`) so
its threads do not share the client's GIL; each measurement is repeated and the median reported,
because the machines are shared.

Run: ``.venv/bin/python benchmarks/probe_orchestration.py [--n 400 --latency 0.1
--concurrency 16 --backend openai|gemini --repeat 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import statistics
import sys
import tempfile
import time
from typing import Any

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from PIL import Image  # noqa: E402

from filtering.leak import LeakFilter, LeakFilterConfig  # noqa: E402
from tests.support.protocol_server import RemoteServer, serve_in_subprocess  # noqa: E402


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


def bare_sdk(backend: str, server: RemoteServer, episodes: list[dict[str, Any]], concurrency: int) -> float:
    """Wall time of the bare SDK calls (one image + prompt each, as a probe sends)."""
    import base64

    async def run() -> float:
        sem = asyncio.Semaphore(concurrency)
        if backend == "openai":
            import openai

            client: Any = openai.AsyncOpenAI(api_key="x", base_url=server.openai_base_url, max_retries=0)

            async def one(ep: dict[str, Any]) -> None:
                url = "data:image/png;base64," + base64.b64encode(ep["frames"][0]["bytes"]).decode()
                content = [{"type": "image_url", "image_url": {"url": url}},
                           {"type": "text", "text": ep["first_turn_prompt"]}]
                async with sem:
                    await client.chat.completions.create(
                        model="bare", messages=[{"role": "user", "content": content}], max_tokens=32)
        else:
            from google import genai
            from google.genai import types

            client = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=server.base_url))
            config = types.GenerateContentConfig(temperature=0.0, max_output_tokens=32)

            async def one(ep: dict[str, Any]) -> None:
                parts = [types.Part.from_bytes(data=ep["frames"][0]["bytes"], mime_type="image/png"),
                         types.Part.from_text(text=ep["first_turn_prompt"])]
                async with sem:
                    await client.aio.models.generate_content(
                        model="bare", contents=[types.Content(role="user", parts=parts)], config=config)

        await asyncio.gather(*(one(ep) for ep in episodes[:concurrency]))  # warm-up: connections
        t0 = time.perf_counter()
        await asyncio.gather(*(one(ep) for ep in episodes))
        elapsed = time.perf_counter() - t0
        await (client.close() if backend == "openai" else client.aio.aclose())  # before the loop ends
        return elapsed

    return asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--backend", choices=["openai", "gemini"], default="openai")
    ap.add_argument("--repeat", type=int, default=3, help="measurements per figure (median)")
    args = ap.parse_args(argv)

    ideal = args.n * args.latency / args.concurrency
    runs: list[tuple[float, float, int, int, float]] = []
    bare: list[float] = []
    with serve_in_subprocess(args.latency) as server:
        base = server.openai_base_url if args.backend == "openai" else server.base_url
        for rep in range(args.repeat):
            episodes = [episode(rep * 100_000 + i) for i in range(args.n)]
            with tempfile.TemporaryDirectory() as tmp:
                cfg = LeakFilterConfig.from_dict({
                    "leak_filter": {"unresolved_policy": "reject", "progress": True},
                    "models": {"cache_dir": tmp, "limits": {
                        args.backend: {"concurrency": args.concurrency, "timeout_s": 30}}},
                    "probes": [{"backend": args.backend, "model": "bench-model", "base_url": base}],
                })
                # Warm-up (not timed, not counted): first use of the SDKs imports modules, builds
                # pydantic models and opens the connections, a one-off cost of the process.
                LeakFilter(cfg).probe([episode(10_000_000 + rep * 1000 + i) for i in range(args.concurrency)])
                server.reset_log()
                t0, c0 = time.perf_counter(), time.process_time()
                LeakFilter(cfg).probe(episodes)
                achieved, cpu = time.perf_counter() - t0, time.process_time() - c0
                first = server.count()
                server.reset_log()
                t1 = time.perf_counter()
                LeakFilter(cfg).probe(episodes)
                runs.append((achieved, cpu, first, server.count(), time.perf_counter() - t1))
            server.reset_log()
            bare.append(bare_sdk(args.backend, server, episodes, args.concurrency))
    achieved = statistics.median(r[0] for r in runs)
    cpu = statistics.median(r[1] for r in runs)
    bare_t = statistics.median(bare)
    print(f"backend={args.backend} N={args.n} latency={args.latency * 1000:.0f}ms "
          f"concurrency={args.concurrency} repeat={args.repeat} (medians)")
    print(f"first run: {runs[0][2]} requests in {achieved:.2f}s; ideal N*latency/concurrency = "
          f"{ideal:.2f}s; achieved/ideal = {achieved / ideal:.2f} "
          f"(runs: {', '.join(f'{r[0] / ideal:.2f}' for r in runs)})")
    print(f"bare SDK, same server: {bare_t:.2f}s = {bare_t / ideal:.2f} x ideal; "
          f"client layer / bare SDK = {achieved / bare_t:.2f}")
    print(f"client CPU {1000 * cpu / args.n:.2f} ms/request: N*CPU = {cpu:.2f}s "
          f"({100 * cpu / ideal:.0f}% of the ideal time)")
    print(f"immediate rerun: {max(r[3] for r in runs)} requests in "
          f"{statistics.median(r[4] for r in runs):.2f}s (from cache)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
