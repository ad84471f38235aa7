"""Command line for the review server, push and pull (used by ``make label-studio``).

    python -m annotation.cli server start|stop|status [--data-dir D] [--port P] [--media-root M]
    python -m annotation.cli panel ensure
    python -m annotation.cli push --benchmark B --round R --rubric NAME --candidates FILE.jsonl \
        --log-dir DIR [--media-dir D]
    python -m annotation.cli pull --benchmark B --round R --rubric NAME --log-dir DIR
    python -m annotation.cli status --log-dir DIR [--benchmark B]
    python -m annotation.cli verify --log-dir DIR [--adopt] [--release RELEASE_DIR]
    python -m annotation.cli import FILE --log-dir DIR
    python -m annotation.cli gemini-review --rubric NAME --candidates FILE.jsonl --model M --log-dir DIR
    python -m annotation.cli audit --log-dir DIR --out REPORTS_DIR [--model-log DIR] [--benchmark B]

``--rubric NAME`` is found in the benchmark folders (``pipelines/<benchmark>/rubric.py``), which
only ``benchforge review`` can look into: run push, pull and gemini-review that way.
``--data-dir`` names the server (default: ``server.data_dir`` of configs/review_panel.yaml);
push and pull find the running server of that data dir and its media root. The decision log
(``--log-dir``) holds what was pushed, every pull and its violations: push, pull, status, audit
and the release build all read the same folder. Every write of it is chained (``chain.jsonl``):
every reader verifies the chain and refuses a log edited by hand, naming the first bad record.
``server start`` also starts a webhook receiver on 127.0.0.1 that appends every Label Studio
event (annotation created, updated, deleted; tasks created, deleted) to the log of its round as
it happens; ``pull`` reconciles them, and a hole in the capture is a violation.
``verify --release`` checks that the log still holds the head a release was built from.
Decisions that were not pulled (a JSONL or Parquet file of rows) enter a log only through
``import``, which records the file's sha256 in the chain; the release card names it.

Nothing here prints a token, password, invite link or e-mail address (design.md §Conventions): the panel is
shown by pseudonym and user id only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from annotation.rubrics import Rubric
from annotation.server import (
    LabelStudioError,
    LabelStudioServer,
    PanelConfig,
    ensure_panel,
    load_panel_config,
    reviewer_file_path,
)


def _config(args: argparse.Namespace) -> PanelConfig:
    over: dict[str, Any] = {}
    if getattr(args, "data_dir", None):
        over["data_dir"] = Path(args.data_dir).expanduser().resolve()
    if getattr(args, "port", None):
        over["port"] = int(args.port)
    if getattr(args, "media_root", None):
        over["media_root"] = Path(args.media_root).expanduser().resolve()
    return load_panel_config(args.config, **over)


def _server(cfg: PanelConfig) -> LabelStudioServer:
    return LabelStudioServer(cfg.data_dir, port=cfg.port, venv=cfg.venv, media_root=cfg.media_root,
                             token_file=cfg.token_file, admin_email=cfg.admin_email)


def _url(cfg: PanelConfig, url: str | None) -> str:
    if url:
        return url
    return _running(cfg).url


def _running(cfg: PanelConfig) -> LabelStudioServer:
    srv = _server(cfg)
    if not srv.running_pid():
        raise LabelStudioError(f"no running server for {cfg.data_dir}; run `server start "
                               f"--data-dir {cfg.data_dir}` first")
    return srv


def _media_root(cfg: PanelConfig, args: argparse.Namespace) -> Path:
    """The document root of the server push writes media for: the running server's own (from
    its PID file), or ``--media-root`` when the server is given by ``--url``."""
    if args.url:
        if not args.media_root:
            raise LabelStudioError("with --url, give the server's --media-root as well")
        return Path(args.media_root).expanduser().resolve()
    return _running(cfg).media_root


def cmd_server(args: argparse.Namespace) -> int:
    cfg = _config(args)
    srv = _server(cfg)
    if args.action == "start":
        srv.start()
        rx = srv.receiver()
        print(f"label-studio up at {srv.url} (data {srv.data_dir}, pid {srv.pid}, "
              f"log {srv.log_file}); webhook receiver "
              + (f"at {rx.url} (pid {rx.pid}, log {srv.webhook_state_dir / 'receiver.log'})" if rx
                 else "NOT running: events are not captured"))
    elif args.action == "stop":
        was = srv.running_pid()
        srv.stop()
        print("label-studio stopped" if was else "label-studio was not running")
    else:
        st = srv.status()
        print(json.dumps(st, indent=2))
        return 0 if st["healthy"] else 1
    return 0


def cmd_panel(args: argparse.Namespace) -> int:
    cfg = _config(args)
    panel = ensure_panel(_url(cfg, args.url), cfg)
    print(f"panel ready at {panel.url}: admin (user {panel.admin.user_id}), "
          + ", ".join(f"{m.pseudonym} (user {m.user_id})" for m in panel.reviewers)
          + f"; admin's credentials in {cfg.token_file}, each reviewer's in its own "
          f"{reviewer_file_path(cfg.token_file, 'r<i>')} (mode 600, folders 700)")
    return 0


def read_candidates(path: str) -> list[Any]:
    """Candidates from JSON lines (sample_id, version, task_type, content, media) — what the
    benchmark builds write as ``review_candidates.jsonl`` — as one list (the Gemini reviewer's
    input); ``push`` reads the file itself, a line at a time (:class:`CandidatesFile`)."""
    from annotation.candidates import BadCandidate, CandidatesFile

    try:
        return list(CandidatesFile(path))
    except BadCandidate as exc:
        raise SystemExit(str(exc)) from None


def cmd_push(args: argparse.Namespace) -> int:
    """Push a candidates file into every reviewer's project of the round; media paths in it are
    relative to ``--media-dir`` (default: ``media/`` beside the candidates file, where the
    builds' pending-review state keeps them). The file is read by ``push`` a line at a time, on
    each of its passes (:class:`CandidatesFile`): a round of any size is never held whole."""
    from annotation.candidates import BadCandidate, CandidatesFile
    from annotation.push import PushError, push

    cfg = _config(args)
    root = _media_root(cfg, args)
    panel = ensure_panel(_url(cfg, args.url), cfg)
    cands = CandidatesFile(args.candidates)
    media_dir = Path(args.media_dir) if args.media_dir else Path(args.candidates).parent / "media"
    try:
        res = push(panel.admin.client(), args.benchmark, args.round, cands, args.rubric_of(args.rubric),
                   reviewers=[m.pseudonym for m in panel.reviewers], media_root=root,
                   media_dir=media_dir, log_dir=args.log_dir)
    except BadCandidate as exc:  # a line of the file, found before any request: as ever, its line
        raise SystemExit(str(exc)) from None
    except (PushError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{res.n_candidates} candidate versions in {len(res.projects)} reviewer projects "
          f"{args.benchmark!r} / {args.round!r} / {', '.join(res.projects)}; media in "
          f"{root}; push record {res.log_file}")
    if res.events is None:
        print("warning: no webhook receiver runs for this server: events are not captured and "
              "every pull of this round reports an event_gap (`server start` starts it)",
              file=sys.stderr)
    return 0


def cmd_gemini_review(args: argparse.Namespace) -> int:
    """The Gemini reviewer on the frozen first-round candidates (StreamVibe App. B.3): its own
    rater in its own decision log, never counted toward approval; failures are reported, not
    guessed. The API key comes from GEMINI_API_KEY / GOOGLE_API_KEY only."""
    from annotation import decision_log
    from annotation.gemini_reviewer import GeminiReviewer

    rubric = args.rubric_of(args.rubric)
    root = Path(args.media_root) if args.media_root else Path(args.candidates).parent / "media"
    cands = read_candidates(args.candidates)
    reviewer = GeminiReviewer(args.model, rubric.name, [(c.key, c.hint) for c in rubric.criteria],
                              args.cache_dir, base_url=args.base_url, benchmark=rubric.benchmark,
                              review_round=args.round)
    rows, failures = reviewer.review([
        (c.sample_id, c.version, c.task_type, c.content, [str(root / m) for m in c.media])
        for c in cands])
    path = decision_log.append(args.log_dir, rows, benchmark=rubric.benchmark,
                               review_round=args.round, violations=failures)
    print(f"{len(rows)} model decisions, {len(failures)} failures (listed with the log) -> {path}")
    return 0 if not failures else 3


def _review_state(log_dir: str, benchmark: str | None, panel_size: int) -> dict[str, Any]:
    """Statuses from the log's full history, its latest pushed versions and standing violations
    (``annotation.approval``)."""
    from annotation import decision_log
    from annotation.approval import statuses

    def mine(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [r for r in rows if benchmark is None or r["benchmark"] == benchmark]

    return statuses(mine(decision_log.read(log_dir, current=False)), panel_size=panel_size,
                    latest_versions=decision_log.latest_pushed(log_dir, benchmark),
                    violations=mine(decision_log.read_violations(log_dir)))


def cmd_pull(args: argparse.Namespace) -> int:
    from annotation.pull import pull

    cfg = _config(args)
    panel = ensure_panel(_url(cfg, args.url), cfg)
    try:
        res = pull(panel.admin.client(), args.benchmark, args.round, args.rubric_of(args.rubric), panel,
                   log_dir=args.log_dir)
    except ValueError as exc:  # no project / no push records: nothing was written
        print(f"error: {exc}", file=sys.stderr)
        return 2
    kinds = res.violation_kinds()
    print(f"{res.n_tasks} tasks, {res.n_annotations} annotations -> {res.n_decisions} "
          f"decisions, {kinds.total()} violations; written to {res.log_file}")
    for kind, n in sorted(kinds.items()):
        print(f"  violation {kind}: {n}")
    st = _review_state(args.log_dir, args.benchmark, panel.size)
    for state, n in sorted(Counter(s.state for s in st.values()).items()):
        print(f"  {state}: {n}")
    waiting = {k: v for k, v in res.awaiting.items() if st.get(k[0]) and st[k[0]].version == k[1]}
    print(f"  not yet decided by every reviewer: {len(waiting)}")
    for (sid, ver), missing in list(waiting.items())[:20]:
        print(f"    {sid} v{ver}: waiting for {', '.join(missing)}")
    if len(waiting) > 20:
        print(f"    … {len(waiting) - 20} more (`status --log-dir {args.log_dir}`)")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """One line per candidate: its latest version (pushed corrections included), state,
    approvals, objections and standing violations."""
    st = _review_state(args.log_dir, args.benchmark, args.panel_size)
    for s in st.values():
        print(f"{s.sample_id}\tv{s.version}\t{s.state}\tapprove={','.join(s.approvals)}\t"
              f"objections={','.join(f'{r}:{d}' for r, d in s.objections)}"
              + (f"\tviolations={'; '.join(s.violations)}" if s.violations else ""))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Check the log's chain (what every reader does first) and print its head."""
    from annotation import decision_log

    if args.adopt:
        rec = decision_log.adopt(args.log_dir)
        print(f"adopted {len(rec['files'])} unchained files of {args.log_dir} as they are now "
              "(nothing proves they were not edited before)")
    recs = decision_log.chain(args.log_dir)
    kinds = Counter(r["kind"] for r in recs)
    print(f"{args.log_dir}: {len(recs)} chain records, head "
          f"{recs[-1]['head'] if recs else decision_log.GENESIS}"
          + (f" ({', '.join(f'{n} {k}' for k, n in sorted(kinds.items()))})" if recs else ""))
    if args.release:
        head, n = decision_log.release_head(args.release)
        got = decision_log.compare_head(args.log_dir, head, n)
        print(f"  holds the head of release {args.release} ({head}) as chain record {got['seq']}; "
              f"{got['added']} records written since")
    for r in recs:
        if r["kind"] == "import":
            print(f"  record {r['seq']}: decisions imported from {r['source']['file']} sha256 "
                  f"{r['source']['sha256']} ({r['source']['rows']} rows)")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Import a file of REVIEW_DECISION rows into a decision log, the file's sha256 chained: the
    one way decisions that no pull checked enter a log, and the release card says so."""
    from annotation import decision_log

    rec = decision_log.import_rows(args.log_dir, args.file)
    src = rec["source"]
    print(f"{src['rows']} decisions imported from {src['file']} sha256 {src['sha256']} into "
          f"{args.log_dir} (chain record {rec['seq']}, head {rec['head']})")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """Agreement audit of the first-round decisions in a decision log (StreamVibe App. B.3):
    every decision ever pulled (the first one per reviewer on version 1 is selected), the frozen
    candidate set from the push records (candidates nobody decided are listed), optionally the
    Gemini reviewer's decisions; written as Markdown + HTML + plots."""
    from annotation import decision_log
    from annotation.agreement import audit
    from annotation.report import write_agreement_report

    decisions = [r for r in decision_log.read(args.log_dir, current=False)
                 if args.benchmark is None or r["benchmark"] == args.benchmark]
    frozen = {r["sample_id"]: r["task_type"] for r in decision_log.read_pushes(args.log_dir, args.benchmark)
              if int(r["version"]) == 1}
    model_rater = None
    if args.model_log:
        model_rows = decision_log.read(args.model_log, current=False)
        raters = sorted({r["reviewer"] for r in model_rows if r["rater_kind"] == "model"})
        if len(raters) != 1:
            raise LabelStudioError(f"{args.model_log}: expected one model rater, found {raters}")
        model_rater = raters[0]
        decisions += model_rows
    panel = [f"r{i}" for i in range(1, args.panel_size + 1)]
    result = audit(decisions, panel, model_rater, global_seed=args.seed, candidates=frozen or None)
    for path in write_agreement_report(result, args.out):
        print(path)
    if result.unreviewed_ids:
        print(f"{len(result.unreviewed_ids)} candidates without any first-round decision: "
              + ", ".join(result.unreviewed_ids[:20]) + (" …" if len(result.unreviewed_ids) > 20 else ""))
    return 0


PROG = "python -m annotation.cli"


def build_parser(prog: str = PROG) -> argparse.ArgumentParser:
    """The review command line under the program name it is run as (``benchforge review`` from
    the ``benchforge`` entry point): usage lines and the description's examples show that name, so
    what ``--help`` prints pastes as it is."""
    ap = argparse.ArgumentParser(prog=prog, description=(__doc__ or "").replace(PROG, prog),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=None, help="panel config (default configs/review_panel.yaml)")
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir", help="the server's data folder: names which server (default: "
                                          "server.data_dir of the panel config)")
        p.add_argument("--port", type=int, help="the server's port (default: server.port of the panel "
                                                "config)")
        p.add_argument("--media-root", help="the folder the server serves media from (default: the "
                                            "running server's own, or the panel config's)")
        p.add_argument("--url", help="server URL (default: the running server of --data-dir)")

    def round_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--benchmark", required=True, help="streamvibe or proready: whose candidates")
        p.add_argument("--round", required=True, help="the review round's name (the build's pending "
                                                      "state names it in its printed commands)")
        p.add_argument("--rubric", required=True, help="the rubric reviewers decide by (the "
                                                       "benchmark folder's rubric.py; the pending "
                                                       "state names it)")

    s = sub.add_parser("server", help="start, stop or show the local Label Studio server")
    s.add_argument("action", choices=["start", "stop", "status"], help="what to do with the server")
    common(s)
    s.set_defaults(fn=cmd_server)
    p = sub.add_parser("panel", help="create the four reviewers and their projects (idempotent)")
    p.add_argument("action", choices=["ensure"], help="ensure: create what is missing, keep the rest")
    common(p)
    p.set_defaults(fn=cmd_panel)
    for name, fn, what in (("push", cmd_push, "push candidates to every reviewer's project"),
                           ("pull", cmd_pull, "pull the reviewers' decisions into the decision log")):
        q = sub.add_parser(name, help=what)
        common(q)
        round_options(q)
        q.add_argument("--log-dir", required=True,
                       help="the review's decision log (push records, pulls, violations)")
        if name == "push":
            q.add_argument("--candidates", required=True, help="JSON lines: sample_id, version, "
                           "task_type, content, media")
            q.add_argument("--media-dir", help="folder the candidates' media paths are relative "
                           "to (default: media/ beside the candidates file)")
        q.set_defaults(fn=fn)
    t = sub.add_parser("status", help="one line per candidate: version, state, approvals, objections")
    t.add_argument("--log-dir", required=True, help="the review's decision log")
    t.add_argument("--benchmark", default=None, help="only this benchmark's candidates of a shared log")
    t.add_argument("--panel-size", type=int, default=4, help="reviewers who must approve (default: 4, "
                                                             "StreamVibe App. B.3)")
    t.set_defaults(fn=cmd_status)
    v = sub.add_parser("verify", help="check the decision log's chain and print its head hash")
    v.add_argument("--log-dir", required=True, help="the review's decision log")
    v.add_argument("--adopt", action="store_true", help="first chain a log written before logs "
                   "were chained, as it is now (the chain and release cards say so)")
    v.add_argument("--release", default=None, help="a release folder built from this log: check "
                   "that the log still holds the head its manifest recorded (refused, naming where "
                   "they diverge, if the log was rewritten or cut back)")
    v.set_defaults(fn=cmd_verify)
    i = sub.add_parser("import", help="import a file of decision rows into a log (its sha256 chained)")
    i.add_argument("file", help="JSONL or Parquet file of REVIEW_DECISION rows")
    i.add_argument("--log-dir", required=True, help="the decision log to import into (created if "
                                                    "missing)")
    i.set_defaults(fn=cmd_import)
    g = sub.add_parser("gemini-review", help="the Gemini reviewer as its own rater (never approves)")
    g.add_argument("--rubric", required=True, help="the rubric the model decides by, as for push")
    g.add_argument("--candidates", required=True, help="JSON lines, as for push")
    g.add_argument("--model", required=True, help="e.g. gemini-2.5-flash")
    g.add_argument("--log-dir", required=True, help="the model rater's decision log")
    g.add_argument("--round", default="gemini-first-round", help="the round its decisions are logged "
                                                                 "under (default: gemini-first-round)")
    g.add_argument("--cache-dir", default=".cache/gemini-reviewer",
                   help="response cache, so a rerun asks the model nothing twice (default: "
                        ".cache/gemini-reviewer)")
    g.add_argument("--base-url", default=None, help="another server speaking the Gemini API")
    g.add_argument("--media-root", default=None, help="folder the candidates' media paths are "
                   "relative to (default: media/ beside the candidates file, as for push)")
    g.set_defaults(fn=cmd_gemini_review)
    a = sub.add_parser("audit", help="agreement report (Fleiss' κ, Cohen's κ vs the model rater)")
    a.add_argument("--log-dir", required=True, help="human decision log (from `pull`)")
    a.add_argument("--model-log", help="decision log of the Gemini reviewer (rater_kind=model)")
    a.add_argument("--out", required=True, help="reports directory, e.g. <release>/reports")
    a.add_argument("--benchmark", default=None, help="audit one benchmark of a shared log")
    a.add_argument("--panel-size", type=int, default=4, help="human reviewers per candidate (default: 4)")
    a.add_argument("--seed", type=int, default=0, help="bootstrap seed (design.md §Conventions)")
    a.set_defaults(fn=cmd_audit)
    return ap


def no_rubrics(name: str) -> Rubric:
    raise SystemExit(f"unknown rubric {name!r}: run the review commands as `benchforge review`, "
                     "which finds each benchmark's rubric in its folder")


def main(argv: list[str] | None = None, prog: str = PROG,
         rubrics: Callable[[str], Rubric] = no_rubrics) -> int:
    """Run one review command. ``rubrics`` finds a rubric by name: the rubrics live in the
    benchmark folders, which this layer may not import, so ``benchforge review`` passes the
    benchmark registry's lookup (:func:`pipelines.registry.rubric`)."""
    ap = build_parser(prog)
    args = ap.parse_args(argv)
    args.rubric_of = rubrics
    from label_studio_sdk.core.api_error import ApiError

    from annotation.decision_log import DecisionLogError

    try:
        return int(args.fn(args))
    except (LabelStudioError, DecisionLogError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except ApiError as exc:  # a request Label Studio refused: status and body, no traceback
        body = str(exc.body)[:400]
        print(f"error: Label Studio answered HTTP {exc.status_code}: {body}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
