"""Command line for the review server and routing (used by ``make label-studio``).

    python -m annotation.cli server start|stop|status [--data-dir D] [--port P] [--media-root M]
    python -m annotation.cli panel ensure
    python -m annotation.cli push --benchmark B --round R --rubric NAME --candidates FILE.jsonl
    python -m annotation.cli pull --benchmark B --round R --rubric NAME --log-dir DIR
    python -m annotation.cli status --log-dir DIR
    python -m annotation.cli gemini-review --rubric NAME --candidates FILE.jsonl --model M --log-dir DIR
    python -m annotation.cli audit --log-dir DIR --out REPORTS_DIR [--model-log DIR]

Nothing here prints a token, password, invite link or e-mail address (design.md §Conventions): the panel is
shown by pseudonym and user id only.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from annotation.server import (
    LabelStudioError,
    LabelStudioServer,
    PanelConfig,
    ensure_panel,
    load_panel_config,
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
    srv = _server(cfg)
    if not srv.running_pid():
        raise LabelStudioError(f"no running server for {cfg.data_dir}; run `server start` first")
    return srv.url


def cmd_server(args: argparse.Namespace) -> int:
    cfg = _config(args)
    srv = _server(cfg)
    if args.action == "start":
        srv.start()
        print(f"label-studio up at {srv.url} (data {srv.data_dir}, pid {srv.pid}, "
              f"log {srv.log_file})")
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
          + f"; tokens in {cfg.token_file} (mode 600)")
    return 0


def read_candidates(path: str) -> list[Any]:
    """Candidates from JSON lines (sample_id, version, task_type, content, media) — what the
    benchmark builds write as ``review_candidates.jsonl``."""
    from annotation.routing import Candidate

    cands = []
    for n, line in enumerate(Path(path).read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            cands.append(Candidate(str(raw["sample_id"]), int(raw["version"]),
                                   str(raw.get("task_type", "")), dict(raw["content"]),
                                   list(raw.get("media", []))))
        except (ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"{path}:{n}: bad candidate ({exc})") from None
    return cands


def cmd_push(args: argparse.Namespace) -> int:
    from annotation.routing import push
    from annotation.rubrics import get_rubric

    cfg = _config(args)
    panel = ensure_panel(_url(cfg, args.url), cfg)
    cands = read_candidates(args.candidates)
    m = push(panel.admin.client(), args.benchmark, args.round, cands, get_rubric(args.rubric),
             args.media_root or cfg.media_root, panel_size=panel.size)
    print(f"{len(m)} candidate versions in project {args.benchmark!r} / {args.round!r}")
    return 0


def cmd_gemini_review(args: argparse.Namespace) -> int:
    """The Gemini reviewer on the frozen first-round candidates (StreamVibe App. B.3): its own
    rater in its own decision log, never counted toward approval; failures are reported, not
    guessed. The API key comes from GEMINI_API_KEY / GOOGLE_API_KEY only."""
    from annotation import decision_log
    from annotation.gemini_reviewer import GeminiReviewer
    from annotation.rubrics import get_rubric

    rubric = get_rubric(args.rubric)
    root = Path(args.media_root) if args.media_root else Path(".")
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


def cmd_pull(args: argparse.Namespace) -> int:
    from annotation.approval import statuses
    from annotation.routing import pull
    from annotation.rubrics import get_rubric

    cfg = _config(args)
    panel = ensure_panel(_url(cfg, args.url), cfg)
    res = pull(panel.admin.client(), args.benchmark, args.round, get_rubric(args.rubric), panel,
               log_dir=args.log_dir)
    st = statuses(res.decisions, panel_size=panel.size)
    print(f"{res.n_tasks} tasks, {res.n_annotations} annotations -> {len(res.decisions)} "
          f"decisions, {len(res.violations)} violations; written to {res.log_file}")
    for kind, n in sorted(Counter(v["kind"] for v in res.violations).items()):
        print(f"  violation {kind}: {n}")
    for state, n in sorted(Counter(s.state for s in st.values()).items()):
        print(f"  {state}: {n}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from annotation import decision_log
    from annotation.approval import statuses

    st = statuses(decision_log.read(args.log_dir), panel_size=args.panel_size)
    for s in st.values():
        print(f"{s.sample_id}\tv{s.version}\t{s.state}\tapprove={','.join(s.approvals)}\t"
              f"objections={','.join(f'{r}:{d}' for r, d in s.objections)}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    """Agreement audit of the first-round decisions in a decision log (StreamVibe App. B.3),
    optionally with the Gemini reviewer's decisions, written as Markdown + HTML + plots."""
    from annotation import decision_log
    from annotation.agreement import audit
    from annotation.report import write_agreement_report

    decisions = decision_log.read(args.log_dir)
    model_rater = None
    if args.model_log:
        model_rows = decision_log.read(args.model_log)
        raters = sorted({r["reviewer"] for r in model_rows if r["rater_kind"] == "model"})
        if len(raters) != 1:
            raise LabelStudioError(f"{args.model_log}: expected one model rater, found {raters}")
        model_rater = raters[0]
        decisions += model_rows
    panel = [f"r{i}" for i in range(1, args.panel_size + 1)]
    result = audit(decisions, panel, model_rater, global_seed=args.seed)
    for path in write_agreement_report(result, args.out):
        print(path)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m annotation.cli", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default=None, help="panel config (default configs/review_panel.yaml)")
    sub = ap.add_subparsers(dest="cmd", required=True)

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--data-dir")
        p.add_argument("--port", type=int)
        p.add_argument("--media-root")
        p.add_argument("--url", help="server URL (default: the running server of --data-dir)")

    s = sub.add_parser("server")
    s.add_argument("action", choices=["start", "stop", "status"])
    common(s)
    s.set_defaults(fn=cmd_server)
    p = sub.add_parser("panel")
    p.add_argument("action", choices=["ensure"])
    common(p)
    p.set_defaults(fn=cmd_panel)
    for name, fn in (("push", cmd_push), ("pull", cmd_pull)):
        q = sub.add_parser(name)
        common(q)
        q.add_argument("--benchmark", required=True)
        q.add_argument("--round", required=True)
        q.add_argument("--rubric", required=True)
        if name == "push":
            q.add_argument("--candidates", required=True, help="JSON lines: sample_id, version, "
                           "task_type, content, media")
        else:
            q.add_argument("--log-dir", required=True)
        q.set_defaults(fn=fn)
    t = sub.add_parser("status")
    t.add_argument("--log-dir", required=True)
    t.add_argument("--panel-size", type=int, default=4)
    t.set_defaults(fn=cmd_status)
    g = sub.add_parser("gemini-review", help="the Gemini reviewer as its own rater (never approves)")
    g.add_argument("--rubric", required=True)
    g.add_argument("--candidates", required=True, help="JSON lines, as for push")
    g.add_argument("--model", required=True, help="e.g. gemini-2.5-flash")
    g.add_argument("--log-dir", required=True, help="the model rater's decision log")
    g.add_argument("--round", default="gemini-first-round")
    g.add_argument("--cache-dir", default=".cache/gemini-reviewer")
    g.add_argument("--base-url", default=None, help="another server speaking the Gemini API")
    g.add_argument("--media-root", default=None, help="media paths in the candidates are relative to")
    g.set_defaults(fn=cmd_gemini_review)
    a = sub.add_parser("audit", help="agreement report (Fleiss' κ, Cohen's κ vs the model rater)")
    a.add_argument("--log-dir", required=True, help="human decision log (from `pull`)")
    a.add_argument("--model-log", help="decision log of the Gemini reviewer (rater_kind=model)")
    a.add_argument("--out", required=True, help="reports directory, e.g. <release>/reports")
    a.add_argument("--panel-size", type=int, default=4)
    a.add_argument("--seed", type=int, default=0, help="bootstrap seed (design.md §Conventions)")
    a.set_defaults(fn=cmd_audit)
    args = ap.parse_args(argv)
    try:
        return int(args.fn(args))
    except LabelStudioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
