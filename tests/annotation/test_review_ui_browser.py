"""The review UI works for a person: a real reviewer in a real browser on the real server.

Why a browser and not the API: everything else in ``annotation`` is checked through the API,
but what a reviewer *sees* — a video that plays and seeks (mp4v does not play, docs/label_studio.md),
the evidence windows with their times, the rubric with its help texts, candidate text escaped,
the decision on screen, nobody else's decision — only shows in the page. So these tests log in
as a reviewer with Debian's headless Chromium (``tests/support/browser.py``) at 1366x768, open a
StreamVibe and a ProReady-QA task pushed by the real ``push`` with media transcoded by the
pipelines' own code (H.264 mp4 / VP9 webm), check that the decision and the criteria are visible
without scrolling, that windows and turns read as text (no raw JSON, no 00:00:00 times) and the
complete candidate keeps its indentation, that the video becomes playable with the right duration
and frame count, jump to an evidence window with its play button, decide with the keyboard
shortcut and the checkboxes, type a comment, submit, and check through the API and ``pull`` that
the decision is stored under that reviewer with a ``lead_time`` and no violation. Another test
checks that a reviewer's task list, task and "Compare All" show no other reviewer's decision.
Screenshots go to the test's output folder (``tmp_path``); with ``BENCHFORGE_UI_SCREENSHOTS=<dir>``
they are also copied there (how docs/img was made).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from annotation.label_config import build_result, parse_result
from annotation.projects import Candidate
from annotation.pull import pull
from annotation.rubrics import DECISION_HOTKEYS, DECISION_LABELS
from annotation.server import Member, ReviewerCredentials, reviewer_file_path
from core.media.probe import probe_video
from pipelines.proready.review import review_candidate, review_media
from pipelines.proready.rubric import PROREADY
from pipelines.streamvibe import review as sv_review
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.browser import VIEWPORT, browser_context, chromium, login  # noqa: F401 (fixtures)
from tests.support.label_studio import LSEnv, push_round

pytestmark = pytest.mark.label_studio

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "<script>window.__bf_xss = 1</script>"
STYLE = "<style>body { display: none !important; --bf-marker: 1 }</style>"
IMG = '<img src="x" onerror="window.__bf_img = 1">'
VIDEO_READY = """() => { const v = document.querySelector('video');
  return !!v && v.readyState >= 3 && Number.isFinite(v.duration) && v.duration > 0 && !v.error; }"""
VIDEO_STATE = """() => { const v = document.querySelector('video');
  return {t: v.currentTime, paused: v.paused, duration: v.duration, ready: v.readyState,
          src: v.currentSrc, error: v.error ? v.error.code : null}; }"""


class Shots:
    """Numbered screenshots in the test's folder (and the docs folder when asked)."""

    def __init__(self, page: Any, folder: Path, prefix: str) -> None:
        self.page, self.folder, self.prefix, self.n = page, folder, prefix, 0
        self.copy_to = os.environ.get("BENCHFORGE_UI_SCREENSHOTS")

    def __call__(self, name: str, locator: Any = None, top: bool = False) -> Path:
        self.n += 1
        if top:  # Label Studio scrolls its own panes; put every one back to the top
            self.page.evaluate("() => document.querySelectorAll('*').forEach(e => { e.scrollTop = 0; })")
        path = self.folder / f"{self.prefix}-{self.n}-{name}.png"
        (locator or self.page).screenshot(path=str(path))
        if self.copy_to:
            Path(self.copy_to).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(self.copy_to) / path.name)
        return path


def _page_text(page: Any) -> str:
    """The page's visible text with runs of white space collapsed (as the browser renders)."""
    return " ".join(page.locator("body").inner_text().split())


def _has(page_text: str, text: str) -> bool:
    return " ".join(text.split()) in page_text


def _open_as(ctx: Any, ls_env: LSEnv, member: Member, pid: int, tid: int
             ) -> tuple[Any, list[str]]:
    """Log in with the reviewer's own password (read from that reviewer's own file) and open
    the labelling page of one task; returns the page and the list its uncaught JS errors go to."""
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    own_file = reviewer_file_path(ls_env.config.token_file, member.pseudonym)
    password = ReviewerCredentials(own_file, member.email).password()
    login(page, member.url, member.email, password)
    page.goto(f"{member.url}/projects/{pid}/data?task={tid}")
    page.wait_for_selector("video", state="attached", timeout=60_000)  # hidden: frames go to a canvas
    return page, errors


def _check_video(page: Any, media: Path, url: str, fps: float) -> dict[str, Any]:
    """The browser reached a playable state on our file (the task's URL into the server's media
    store), with its real duration, and Label Studio's frame counter uses the frame rate we gave
    ``<Video frameRate>``."""
    page.wait_for_function(VIDEO_READY, timeout=60_000)
    st = page.evaluate(VIDEO_STATE)
    real = probe_video(media).duration_s
    assert st["error"] is None and st["ready"] >= 3
    assert st["src"].endswith(url)
    assert st["duration"] == pytest.approx(real, abs=0.05)
    counter = page.locator(".lsf-frames-control").inner_text()
    total = int(re.fullmatch(r"\s*\d+\s+of\s+(\d+)\s*", counter).group(1))
    assert total == pytest.approx(real * fps, abs=1.0)
    return st


def _seek_to_window(page: Any, n: int, start: float) -> float:
    """Click window ``n``'s play button (the synced ``<Paragraphs>``): the paused video must
    *jump* to the window start (it was elsewhere, and reaches it within 5 s — it could not have
    played there) and play from there; then pause it with the same button."""
    before = page.evaluate(VIDEO_STATE)
    assert before["paused"] and not start - 0.05 <= before["t"] < start + 2.0, before
    in_window = """s => { const v = document.querySelector('video');
                          return !v.paused && v.currentTime >= s - 0.05 && v.currentTime < s + 2; }"""
    for attempt in range(3):  # a click that lands while the player re-renders is lost: click again
        page.locator('button[aria-label="play"]').nth(n).click()
        try:
            page.wait_for_function(in_window, arg=start, timeout=5_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError
            state = page.evaluate(VIDEO_STATE)
            if not state["paused"] or attempt == 2:  # it plays, but not from the window start
                raise AssertionError(f"window {n} did not seek to {start} s: {state}") from None
    for attempt in range(3):  # a click that lands while the player re-renders is lost: click again
        if page.evaluate("() => document.querySelector('video').paused"):
            break  # (on a loaded machine it may already have played to the window's end)
        pause = page.locator('button[aria-label="pause"]')
        if pause.count():
            pause.first.click(timeout=5_000)
        else:  # under load Label Studio's buttons can fall out of step with the playing video
            page.evaluate("() => document.querySelector('video').pause()")
        try:
            page.wait_for_function("() => document.querySelector('video').paused", timeout=5_000)
            break
        except Exception:  # noqa: BLE001 - playwright's TimeoutError; the third miss fails below
            if attempt == 2:
                pauses = page.locator('button[aria-label="pause"]').count()
                plays = page.locator('button[aria-label="play"]').count()
                raise AssertionError(f"video does not pause: {page.evaluate(VIDEO_STATE)}, "
                                     f"{pauses} pause and {plays} play buttons") from None
    t = float(page.evaluate("() => document.querySelector('video').currentTime"))
    assert t >= start - 0.05, t  # it played on from the window start (checked above), not from 0
    return t


def _decide(page: Any, decision: str, criteria: list[tuple[str, str]], comment: str,
            shot: Shots) -> dict[str, Any]:
    """Decision by its keyboard shortcut, criteria (label, key) by their shortcut key or, when
    the key is empty, by clicking the checkbox, a comment, Submit; returns the API's answer to
    the UI's POST."""
    from playwright.sync_api import expect  # imported here: the `chromium` fixture may install it

    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # keys to the page
    page.keyboard.press(DECISION_HOTKEYS[decision])
    radio = page.locator("label", has_text=DECISION_LABELS[decision]).locator("input[type=radio]")
    expect(radio).to_be_checked()  # the shortcut selected the decision
    for label, key in criteria:
        box = page.locator(f'input[type=checkbox][name="{label}"]')
        if key:  # Label Studio numbers the criteria on after the decision keys (4, 5, ...)
            page.keyboard.press(key)
        else:
            box.check()
        expect(box).to_be_checked()
    page.locator('textarea[name="comment"]').fill(comment)
    page.locator('textarea[name="comment"]').scroll_into_view_if_needed()
    shot("decided")
    with page.expect_response(lambda r: re.search(r"/api/tasks/\d+/annotations", r.url) is not None
                              and r.request.method == "POST") as resp:
        page.locator('button[aria-label="Submit current annotation"]').click()
    assert resp.value.status == 201, resp.value.text()
    return dict(resp.value.json())


def _stored(member: Member, tid: int) -> dict[str, Any]:
    """The one annotation on the task, read back through the API with the reviewer's token."""
    anns = [a.model_dump() if hasattr(a, "model_dump") else dict(a)
            for a in member.client().annotations.list(id=tid)]
    assert len(anns) == 1
    a = anns[0]
    assert a["completed_by"] == member.user_id
    assert a.get("updated_by") in (None, member.user_id)
    assert a["lead_time"] is not None and a["lead_time"] > 0  # kept for review-effort reports
    assert not a["was_cancelled"]
    return a


def _sv_candidate(fps: float, duration: float) -> dict[str, Any]:
    """A StreamVibe candidate over tree.avi (a hand passes a tree) whose text carries markup."""
    return {
        "id": "ui/opencv-doc/ui-tree/0", "version": 1, "subtype": "I", "task": "watch the tree",
        "source_collection": "opencv-doc", "source_video_id": "ui-tree", "source_file": "tree.avi",
        "video_sha256": "0" * 64, "duration_s": duration, "intents": [], "transitions": [],
        "fps": fps,
        "initial_instruction": f"Tell me when a hand appears. {SCRIPT} {STYLE}",
        "user_turns": [{"t": 0.0, "kind": "initial", "intent_id": "i0",
                        "text": f"Tell me when a hand appears. {IMG}"}],
        "evidence": [
            {"id": "e0", "intent_id": "i0", "start": 11.0, "end": 14.0, "preferred": 12.0,
             "response": f"A hand passes in front of the tree. {STYLE}", "proactive": True},
            {"id": "e1", "intent_id": "i0", "start": 20.0, "end": 23.0, "preferred": 21.0,
             "response": "The hand is gone again.", "proactive": True},
        ],
    }


def _fold(page: Any) -> float:
    """Top of Label Studio's bottom bar (Submit): what lies below it needs scrolling."""
    return float(page.locator('button[aria-label="Submit current annotation"]').bounding_box()["y"])


def _above_the_fold(page: Any, labels: list[str]) -> None:
    """The task opened scrolled to its top, and each label (decision, criteria) is on screen."""
    assert page.evaluate("() => document.querySelector('.lsf-main-content').scrollTop") == 0
    fold = _fold(page)
    for label in labels:
        box = page.locator("label", has_text=label).first.bounding_box()
        assert box is not None and box["y"] > 48 and box["y"] + box["height"] <= fold, (label, box, fold)


def _decision_labels(rubric: Any) -> list[str]:
    return [*DECISION_LABELS.values(), *(c.label for c in rubric.criteria)]


def test_streamvibe_review_in_browser(ls_env, panel, browser_context, videos, tmp_path):  # noqa: F811
    """StreamVibe at 1366x768: decision and criteria on screen as the task opens; H.264 review
    copy plays and seeks; windows and turns read as text; markup in the candidate stays text; the
    complete candidate keeps its indentation; r1 approves with all four criteria (key 1) and the
    decision is r1's, through the API and pull."""
    admin = panel.admin.client()
    src = probe_video(videos / "tree.avi")
    cand = _sv_candidate(round(src.fps, 3), round(src.duration_s, 3))
    media_dir = tmp_path / "media"
    sv_review.prepare_media([cand], str(videos), media_dir)  # the pipeline's own transcode
    media = media_dir / sv_review.media_name(cand)
    assert media.suffix == ".mp4"  # ffmpeg present: H.264, not mp4v
    pushed = push_round(ls_env, panel, "streamvibe", "ui-browser", [sv_review.to_routing_candidate(cand)],
                        STREAMVIBE, tmp_path / "log", media_dir=media_dir)
    tid, pid = pushed.task_id("r1", (cand["id"], 1)), pushed.projects["r1"]
    data = admin.tasks.get(id=str(tid)).data
    assert data["fps"] == pytest.approx(15.0, abs=0.01)

    r1 = panel.reviewer("r1")
    page, js_errors = _open_as(browser_context, ls_env, r1, pid, tid)
    shot = Shots(page, tmp_path, "streamvibe")
    _check_video(page, media, data["media_0"], fps=15.0)
    assert src.duration_s == pytest.approx(probe_video(media).duration_s, abs=0.5)
    page.wait_for_timeout(1000)  # the first frame reaches the canvas; Label Studio settles
    _above_the_fold(page, _decision_labels(STREAMVIBE))
    shot("task-opened")  # 1366x768 as opened: the decision is visible without scrolling

    # everything the rubric asks about is on the page, readable, candidate text as text
    body = page.locator("body")
    seen = _page_text(page)
    for text in ("Initial instruction", "Timestamped user turns",
                 f"user @ 0.0 s: Tell me when a hand appears. {IMG} (intent: i0 · kind: initial)",
                 "e0 [11.0 s \u2013 14.0 s]", "e1 [20.0 s \u2013 23.0 s]",
                 "A hand passes in front of the tree.", "(intent: i0 · preferred: 12.0 · proactive: yes)",
                 "Decision (keys 1 / 2 / 3)", *[f"{c.label}: {c.hint}" for c in STREAMVIBE.criteria]):
        assert _has(seen, text), text
    assert '{"intent"' not in seen and "00:00:00 - 00:00:00" not in seen
    # the complete candidate is shown as indented JSON (white space kept)
    assert '\n  "duration_s": 29.6' in page.evaluate("() => document.body.innerText")
    for markup in (SCRIPT, STYLE, IMG):
        assert page.get_by_text(markup, exact=False).count() >= 1, markup
    assert page.evaluate("() => [window.__bf_xss, window.__bf_img]") == [None, None]
    assert page.evaluate("""() => Array.from(document.querySelectorAll('style, script, img'))
        .filter(e => /__bf_|--bf-marker/.test((e.textContent || '') + (e.getAttribute('onerror') || '')))
        .map(e => e.tagName + ':' + e.outerHTML.slice(0, 300))""") == []
    assert body.is_visible()
    assert page.evaluate("() => getComputedStyle(document.body).display") != "none"

    # jump to window e1, then back to e0 (the evidence the reviewer checks for "Timing")
    t1 = _seek_to_window(page, 1, 20.0)
    t0 = _seek_to_window(page, 0, 11.0)
    assert t0 < t1
    page.locator(".lsf-frames-control").scroll_into_view_if_needed()
    shot("window-e0")  # frame counter at 11.0 s (frame 165 of 449 at 15 fps)

    # on a wide screen there is room for everything next to the video
    page.set_viewport_size({"width": 1680, "height": 1000})
    page.wait_for_timeout(500)
    video_box = page.locator(".lsf-frames-control").bounding_box()
    decision_box = page.get_by_text("Decision (keys 1 / 2 / 3)").bounding_box()
    assert decision_box["x"] > video_box["x"] + 500, (video_box, decision_box)
    shot("wide-window", top=True)
    page.set_viewport_size(VIEWPORT)

    # the project page's instructions: acceptance rule and each criterion's meaning
    page.get_by_role("button", name="Instructions").click()
    modal = page.locator(".lsf-modal-ls__body").first
    modal.wait_for(state="visible")
    text = modal.inner_text()
    assert "Acceptance rule." in text and "three approvals are insufficient" in text
    assert all(c.label in text and c.hint in text for c in STREAMVIBE.criteria)
    shot("instructions")
    page.locator(".lsf-modal-ls button").first.click()  # the dialog's close (x) button
    modal.wait_for(state="hidden")

    labels = [(c.label, "") for c in STREAMVIBE.criteria]
    comment = "Checked both windows; <b>fine</b>."
    _decide(page, "approve", labels, comment, shot)
    assert js_errors == []

    a = _stored(r1, tid)
    parsed = parse_result(a["result"], STREAMVIBE)
    assert (parsed.decision, parsed.criteria, parsed.comment) == (
        "approve", STREAMVIBE.criterion_keys, comment)
    res = pull(admin, "streamvibe", "ui-browser", STREAMVIBE, panel, log_dir=tmp_path / "log")
    assert res.violations == []  # a UI submit is not an edit (edited_decision)
    assert [(d["reviewer"], d["decision"], d["sample_id"], d["version"]) for d in res.decisions] == [
        ("r1", "approve", cand["id"], 1)]
    assert res.decisions[0]["lead_time"] == pytest.approx(a["lead_time"])


def _pr_item() -> dict[str, Any]:
    """A ProReady-QA item over tree.avi (an AVI source, which no browser plays) with one
    future-dependent question carrying markup."""
    turn = {"turn_index": 0, "task_type": "ctd",
            "question": f"When will something cover the tree? {SCRIPT}",
            "answer": f"Now: a hand covers the top right. {STYLE}", "ask_time_s": 2.0, "t_s": 24.0,
            "t_e": 27.0, "refers_to": -1, "dependency": "none", "cue": "hand", "coarse_start_s": 23.0,
            "coarse_end_s": 28.0, "evidence_method": "native_cue", "generator": "template"}
    return {"id": "ui-tree.ctd-0", "version": 1, "task_type": "ctd", "video_id": "ui-tree",
            "video_file": "tree.avi", "video_sha256": "1" * 64, "video_fps": 15.0, "turns": [turn]}


def test_proready_review_in_browser(ls_env, panel, browser_context, videos, tmp_path):  # noqa: F811
    """ProReady-QA at 1366x768 with the build's default review media (``review.media`` of
    configs/proready.yaml: an H.264 copy of the AVI source — the source itself showed "error
    rendering your video"): decision on screen, turns with their real times (no 00:00:00
    labels), the video plays and seeks to t_s; r2 asks for a revision (key 2) with one criterion
    and a comment, stored as r2's decision."""
    admin = panel.admin.client()
    kind = yaml.safe_load((ROOT / "configs" / "proready.yaml").read_text())["review"]["media"]
    item = _pr_item()
    media_dir = tmp_path / "media"
    paths, root = review_media(media_dir, [item], str(videos), kind)  # what the build runs
    assert (kind, root, paths) == ("mp4", None, {"ui-tree": "proready/ui-tree.mp4"})
    media = media_dir / paths["ui-tree"]
    assert probe_video(media).duration_s == pytest.approx(probe_video(videos / "tree.avi").duration_s,
                                                          abs=0.5)
    line = review_candidate(item, [paths["ui-tree"]])
    c = Candidate(line["sample_id"], line["version"], line["task_type"], line["content"], line["media"])
    pushed = push_round(ls_env, panel, "proready", "ui-browser", [c], PROREADY, tmp_path / "log",
                        media_dir=media_dir)
    tid, pid = pushed.task_id("r2", c.key), pushed.projects["r2"]
    data = admin.tasks.get(id=str(tid)).data
    fps = float(data["fps"])
    assert fps == 15.0  # the item's frame rate reaches the <Video> player

    r2 = panel.reviewer("r2")
    page, js_errors = _open_as(browser_context, ls_env, r2, pid, tid)
    shot = Shots(page, tmp_path, "proready")
    _check_video(page, media, data["media_0"], fps=fps)
    page.wait_for_timeout(1000)
    _above_the_fold(page, _decision_labels(PROREADY))
    seen = _page_text(page)
    for text in ("Questions and answers (multi-turn)",
                 f"Q0 [CTD] @ 2.0 s: When will something cover the tree? {SCRIPT}",
                 f"A0 (reference) @ 24.0 s: Now: a hand covers the top right. {STYLE}",
                 "#1 [24.0 s \u2013 27.0 s]", "ask_time_s: 2.0 · coarse_end_s: 28.0",
                 *[f"{k.label}: {k.hint}" for k in PROREADY.criteria]):
        assert _has(seen, text), text
    assert "00:00:00 - 00:00:00" not in seen and '{"ask_time_s"' not in seen
    for markup in (SCRIPT, STYLE):
        assert page.get_by_text(markup, exact=False).count() >= 1, markup
    assert page.evaluate("() => window.__bf_xss") is None
    shot("task-opened")

    _seek_to_window(page, 0, 24.0)
    shot("window-t_s")
    first = PROREADY.criteria[0]
    comment = "t_e is too late: the hand has lifted by 26.0 s."
    _decide(page, "revise", [(first.label, "4")], comment, shot)
    assert js_errors == []

    a = _stored(r2, tid)
    parsed = parse_result(a["result"], PROREADY)
    assert (parsed.decision, parsed.criteria, parsed.comment) == ("revise", (first.key,), comment)
    res = pull(admin, "proready", "ui-browser", PROREADY, panel, log_dir=tmp_path / "log")
    assert res.violations == []
    assert [(d["reviewer"], d["decision"], d["criteria"], d["comment"]) for d in res.decisions] == [
        ("r2", "revise", [first.key], comment)]


def test_reviewers_cannot_see_each_others_decisions(ls_env, panel, browser_context, tmp_path):  # noqa: F811
    """r2 rejects first. In r1's project — what r1 opens — the task list counts no annotation,
    the task shows none and "Compare All" shows no one else's; each decision reaches pull from
    its author's own project. (Against 63bd6ed, one shared project, r1's task list counted r2's
    annotation.) Label Studio Community still lists every project of the organization to every
    member, so r1 could open r2's project on purpose: the reviewer guide says not to."""
    admin = panel.admin.client()
    c = Candidate("blind-1", 1, "I", {"instruction": "Tell me when the clip ends.", "turns": [],
                                      "evidence_points": [], "fps": 2.0}, ["streamvibe/clip.webm"])
    log = tmp_path / "log"
    pushed = push_round(ls_env, panel, "streamvibe", "blind", [c], STREAMVIBE, log)
    panel.reviewer("r2").client().annotations.create(
        id=pushed.task_id("r2", c.key), result=build_result("reject", [], "no evidence"), lead_time=3.0)
    r1 = panel.reviewer("r1")
    pid, tid = pushed.projects["r1"], pushed.task_id("r1", c.key)
    with r1.http() as h:
        listed = h.get("/api/tasks", params={"project": pid}).json()["tasks"]
        assert [(t["id"], t["total_annotations"]) for t in listed] == [(tid, 0)]
        assert h.get(f"/api/tasks/{tid}/annotations").json() == []
    page, js_errors = _open_as(browser_context, ls_env, r1, pid, tid)
    page.wait_for_timeout(1000)
    shot = Shots(page, tmp_path, "blind")
    page.get_by_text("Compare All").click()
    page.wait_for_timeout(1500)
    shot("compare-all")
    seen = _page_text(page)
    assert "reviewer2" not in seen and "no evidence" not in seen
    page.get_by_text("Compare All").click()  # back to r1's own annotation
    page.wait_for_timeout(500)
    _decide(page, "approve", [(k.label, "") for k in STREAMVIBE.criteria], "", shot)
    assert js_errors == []
    res = pull(admin, "streamvibe", "blind", STREAMVIBE, panel, log_dir=log)
    assert res.violations == []
    assert [(d["reviewer"], d["decision"], d["source_task_id"]) for d in res.decisions] == [
        ("r1", "approve", tid), ("r2", "reject", pushed.task_id("r2", c.key))]


def test_windows_data_without_times_still_listed():
    """Server-free: a window whose times are missing or not numbers is listed (nothing of the
    review unit hidden) but gets no play button (no ``start``), and list-valued times are read
    by ``field.i``."""
    from annotation.label_config import display_data

    content = {"evidence_points": [
        {"id": "e0", "window": [1.5, 3], "gold_response": "<b>x</b>", "preferred": 2},
        {"id": "e1", "window": ["a", None], "gold_response": "y"},
        "not a dict",
    ]}
    data = display_data(content, ["/data/local-files/?d=sv/x.mp4"], STREAMVIBE)
    assert data["win_evidence_points"] == [
        {"speaker": "e0  [1.5 s \u2013 3.0 s]", "text": "<b>x</b>  (preferred: 2)", "start": 1.5,
         "end": 3.0},
        {"speaker": "e1  [no valid window]", "text": "y"},
        {"speaker": "#3", "text": "not a dict"},
    ]
    assert display_data({}, ["u"], STREAMVIBE)["win_evidence_points"] == [{"speaker": "-", "text": "(none)"}]
