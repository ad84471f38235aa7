"""Push and pull N candidates (four decisions each, one project per reviewer) through a real
Label Studio; print tasks/s.

    .venv/bin/python benchmarks/label_studio_roundtrip.py [--n 2000] [--push-only]

Why: a review round of a full benchmark is thousands of candidates (StreamVibe-Bench targets
4,100 samples, StreamVibe Table 15), so push and pull must stay in seconds, not minutes. The
figures come with a baseline measured in the same run: Label Studio's own bulk import / JSON
export of the same tasks, with no wrapper, into four new projects (creating them is timed on both
sides) and out of our four. The ratio is the cost of our hashing, media store, idempotency check,
webhook, push records, integrity checks and Parquet decision log.

Starts its own server on a fresh temporary data dir (≈ 30–45 s, not timed) with a temporary token
file, and stops it at the end.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from annotation import decision_log  # noqa: E402
from annotation.approval import statuses  # noqa: E402
from annotation.candidates import CandidatesFile  # noqa: E402
from annotation.label_config import build_result  # noqa: E402
from annotation.projects import Candidate, export_tasks  # noqa: E402
from annotation.pull import pull  # noqa: E402
from annotation.push import PushResult, push  # noqa: E402
from annotation.server import LabelStudioServer, PanelConfig, ensure_panel  # noqa: E402
from benchmarks.monitor import MB, PeakRss  # noqa: E402
from pipelines.streamvibe.rubric import STREAMVIBE  # noqa: E402


def _candidate(i: int) -> Candidate:
    return Candidate(
        f"sv-{i:05d}", 1, ("I", "P", "R", "G", "L", "M", "T", "RV", "CP", "IT")[i % 10],
        {
            "instruction": f"Tell me when step {i % 7} is done.",
            "turns": [{"role": "user", "time": 3.0 + i % 5, "text": "and warn me if I skip"}],
            "evidence_points": [{"window": [10.0, 14.0], "preferred": 11.0,
                                 "response": f"Step {i % 7} is done."}],
            "fps": 1.0,
        },
        ["bench/clip.webm"],
    )


def _write_candidates(path: Path, n: int) -> CandidatesFile:
    """The N candidates as the builds leave them (``review_candidates.jsonl``), written a line at
    a time, for push to read as the CLI gives them: so "during push" is push's own memory, not a
    list of candidates built beforehand."""
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            c = _candidate(i)
            fh.write(json.dumps({"sample_id": c.sample_id, "version": c.version,
                                 "task_type": c.task_type, "content": c.content,
                                 "media": c.media}) + "\n")
    return CandidatesFile(path)


def _annotate(panel, pushed: PushResult, n_revise_every: int) -> float:
    """Each reviewer decides every task of their project with their own token, one thread per
    reviewer."""
    keys = sorted(pushed.tasks["r1"])
    total = len(keys) * len(panel.reviewers)
    done = [0]
    lock = threading.Lock()
    t0 = time.perf_counter()
    errors: list[BaseException] = []

    def work(idx: int) -> None:
        member = panel.reviewers[idx]
        client = member.client()
        try:
            for j, key in enumerate(keys):
                dec = "revise" if (idx == 3 and j % n_revise_every == 0) else "approve"
                crit = list(STREAMVIBE.criterion_keys) if dec == "approve" else ["timing"]
                client.annotations.create(id=pushed.task_id(member.pseudonym, key),
                                          result=build_result(dec, crit),
                                          lead_time=1.0)
                with lock:
                    done[0] += 1
                    if done[0] % 1000 == 0 or done[0] == total:
                        el = time.perf_counter() - t0
                        rate = done[0] / el
                        print(f"  decisions {done[0]}/{total}  {rate:.0f}/s  "
                              f"ETA {(total - done[0]) / rate:.0f} s", flush=True)
        except BaseException as exc:  # surfaced after join
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(panel.reviewers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - t0


def _peak_rss_mb() -> float:
    """This process's peak resident memory so far (Linux reports KiB). Why: the review round must
    stay bounded in memory at a benchmark's size; compare the figure at two ``--n``."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--revise-every", type=int, default=10,
                    help="r4 asks for a revision on every k-th candidate")
    ap.add_argument("--push-only", action="store_true",
                    help="measure push and its baseline, then stop (no decisions, no pull)")
    args = ap.parse_args()
    n = args.n
    with tempfile.TemporaryDirectory(prefix="ls-bench-") as tmp:
        base = Path(tmp)
        media = base / "media"
        (media / "bench").mkdir(parents=True)
        (media / "bench" / "clip.webm").write_bytes(b"\x1a\x45\xdf\xa3" + b"\0" * 1024)
        cfg = PanelConfig(reviewer_emails=tuple(f"bench{i}@bench.test" for i in range(1, 5)),
                          token_file=base / "secrets" / "ls.json", data_dir=base / "data")
        t0 = time.perf_counter()
        with LabelStudioServer(cfg.data_dir, token_file=cfg.token_file,
                               admin_email=cfg.admin_email) as srv:
            panel = ensure_panel(srv.url, cfg)
            print(f"server + panel ready in {time.perf_counter() - t0:.1f} s (not timed below)")
            admin = panel.admin.client()
            cands = _write_candidates(base / "review_candidates.jsonl", n)
            reviewers = [m.pseudonym for m in panel.reviewers]
            log_dir = base / "log"

            def push_all() -> PushResult:
                return push(admin, "streamvibe", "bench", cands, STREAMVIBE, reviewers=reviewers,
                            media_root=srv.media_root, media_dir=media, log_dir=log_dir)

            # -- push --------------------------------------------------------------------------
            t = time.perf_counter()
            with PeakRss() as mem_push:
                pushed = push_all()
            t_push = time.perf_counter() - t
            rss_push = _peak_rss_mb()
            t = time.perf_counter()
            again = push_all()
            t_repush = time.perf_counter() - t
            assert again.tasks == pushed.tasks and len(pushed.tasks["r1"]) == n

            # baseline: the same task payloads, bulk-imported raw into four scratch projects
            payload = [{"data": x["data"]} for x in export_tasks(admin, pushed.projects["r1"])]
            config = admin.projects.get(id=pushed.projects["r1"]).label_config
            t = time.perf_counter()  # a new project each, as push makes, then the bulk import
            for r in reviewers:
                project = admin.projects.create(title=f"baseline {r}", label_config=config)
                for i in range(0, n, 500):
                    admin.projects.import_tasks(project.id, request=payload[i:i + 500])
            t_push_base = time.perf_counter() - t
            if args.push_only:
                print(f"\n{n} candidates, push only: push {t_push:.2f} s, baseline (4 new projects + "
                      f"raw bulk import) {t_push_base:.2f} s -> ours / baseline in tasks/s "
                      f"{t_push_base / t_push:.2f}; re-push {t_repush:.2f} s; peak RSS "
                      f"{rss_push:.0f} MB (during push: +{mem_push.rise_mb:.0f} MB)")
                return 0

            # -- decisions (setup for pull; reported, not the headline) ------------------------
            t_ann = _annotate(panel, pushed, args.revise_every)

            # -- pull --------------------------------------------------------------------------
            t = time.perf_counter()
            with PeakRss() as mem_pull:
                res = pull(admin, "streamvibe", "bench", STREAMVIBE, panel, log_dir=log_dir)
            t_pull = time.perf_counter() - t
            rss_pull = _peak_rss_mb()
            t = time.perf_counter()
            raw = [json.loads(b"".join(admin.projects.exports.download_sync(
                pid, export_type="JSON", download_all_tasks=True, download_resources=False)))
                for pid in pushed.projects.values()]
            t_pull_base = time.perf_counter() - t
            t = time.perf_counter()
            st = statuses(decision_log.read(log_dir, current=False))
            t_status = time.perf_counter() - t

        n_rev = len(range(0, n, args.revise_every))
        states = [s.state for s in st.values()]
        checks = {
            "tasks exported per project": ([len(x) for x in raw], [n] * 4),
            "annotations pulled": (res.n_annotations, 4 * n),
            "decisions logged": (res.n_decisions, 4 * n),
            "violations": (res.violation_kinds(), Counter()),
            "awaiting a decision": (sum(len(r) for r in res.awaiting.values()), 0),
            "needs_correction": (states.count("needs_correction"), n_rev),
            "approved": (states.count("approved"), n - n_rev),
        }
        wrong = {k: v for k, v in checks.items() if v[0] != v[1]}

    print(f"\n{n} candidates x 4 decisions (label-studio 1.23.2, SQLite, 127.0.0.1)")
    print(f"push     {n / t_push:8.0f} candidates/s  ({t_push:.2f} s, 4 projects)   baseline raw "
          f"import {n / t_push_base:.0f} candidates/s  -> ratio {t_push / t_push_base:.2f}x")
    print(f"re-push  {n / t_repush:8.0f} tasks/s  ({t_repush:.2f} s, idempotent, nothing imported)")
    print(f"pull     {n / t_pull:8.0f} candidates/s  ({t_pull:.2f} s, {4 * n / t_pull:.0f} decisions/s, "
          f"incl. integrity checks + Parquet log)   baseline raw export {n / t_pull_base:.0f} "
          f"candidates/s -> ratio {t_pull / t_pull_base:.2f}x")
    print(f"decide   {4 * n / t_ann:8.0f} decisions/s ({t_ann:.1f} s, 4 reviewer threads, own "
          "tokens)")
    print(f"status   {n / t_status:8.0f} candidates/s from the decision log ({t_status:.2f} s)")
    print(f"memory   peak RSS of this process (push, pull and the log; the server not counted): "
          f"{rss_push:.0f} MB after push, {rss_pull:.0f} MB after pull, {_peak_rss_mb():.0f} MB at "
          "the end")
    print(f"memory   during push: {mem_push.before / MB:.0f} MB before, peak {mem_push.peak / MB:.0f} "
          f"MB (+{mem_push.rise_mb:.0f}); during pull: {mem_pull.before / MB:.0f} MB before, peak "
          f"{mem_pull.peak / MB:.0f} MB (+{mem_pull.rise_mb:.0f}) — compare the rises at two --n")
    if wrong:  # the figures above are of a round that did not come back whole
        for k, (got, want) in wrong.items():
            print(f"MISMATCH {k}: got {got}, expected {want}", file=sys.stderr)
        for v in res.violations[:5]:
            print(f"  violation {v}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
