"""The decision log proves itself (docs/annotation.md §The chained log): a log written by a real
push and real pulls, then edited by hand the ways an edit could change a release — a reject
flipped to approve in a pull's Parquet, a pull file deleted, a made-up pull added, two pull files
swapped, the latest violation report emptied, chain records reordered. Each one is refused by
every reader (``status``, the audit, the release's ``--decisions``), naming the first bad record.

Before the chain, each of these edits was read as it stood: the flipped reject made the candidate
approved and the emptied report dropped its standing violation.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotation import cli, decision_log
from annotation.approval import statuses
from annotation.projects import Candidate
from annotation.pull import pull
from core.files import file_sha256
from pipelines.streamvibe.rubric import STREAMVIBE
from tests.support.label_studio import decide, push_round

ALL = list(STREAMVIBE.criterion_keys)
BENCH = "chain"
KEY = ("s1", 1)


def _cand(sid: str) -> Candidate:
    return Candidate(sid, 1, "I", {
        "instruction": f"Tell me when the kettle boils ({sid})",
        "turns": [{"role": "user", "t": 0.0, "text": "Tell me when the kettle boils"}],
        "evidence_points": [{"id": "e0", "window": [1.0, 3.0], "gold_response": "It boils now."}],
        "fps": 2.0}, ["streamvibe/clip.webm"])


@pytest.fixture(scope="module")
def real_log(ls_env, panel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """push (s1, s2) → r4 rejects s1, three approve → pull → r4's task is edited → pull: one
    push file, two pulls, the second with a standing ``task_modified`` violation on s2."""
    log = tmp_path_factory.mktemp("chain") / "log"
    pushed = push_round(ls_env, panel, BENCH, "r1", [_cand("s1"), _cand("s2")], STREAMVIBE, log)
    decide(panel, pushed, KEY, {"r1": "approve", "r2": "approve", "r3": "approve", "r4": "reject"},
           ALL)
    decide(panel, pushed, ("s2", 1), {f"r{i}": "approve" for i in range(1, 5)}, ALL)
    admin = panel.admin.client()
    pull(admin, BENCH, "r1", STREAMVIBE, panel, log_dir=log)
    tid = pushed.task_id("r2", ("s2", 1))
    data = dict(admin.tasks.get(id=str(tid)).data)
    admin.tasks.update(id=str(tid), data={**data, "show_instruction": "Approve this."})
    pull(admin, BENCH, "r1", STREAMVIBE, panel, log_dir=log)
    return log


@pytest.fixture()
def log(real_log: Path, tmp_path: Path) -> Path:
    """A copy of the real log each test may tamper with."""
    return Path(shutil.copytree(real_log, tmp_path / "log"))


def _pulls(log: Path) -> list[Path]:
    return sorted((log / "decisions").glob("*.parquet"))


def _flip_reject(log: Path) -> str:
    """Rewrite the latest pull with r4's reject turned into an approval (valid Parquet, same
    schema and metadata: only the chain can tell)."""
    f = _pulls(log)[-1]
    table = pq.read_table(f)
    rows = [dict(r, decision="approve", criteria=ALL) if r["decision"] == "reject" else r
            for r in table.to_pylist()]
    assert sum(r["decision"] == "approve" for r in rows) == 7
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), f)
    return f"decisions/{f.name}"


def _delete_first_pull(log: Path) -> str:
    f = _pulls(log)[0]
    f.unlink()
    return f"decisions/{f.name}"


def _insert_pull(log: Path) -> str:
    """A made-up pull, later than every real one, copied from a real one (valid content)."""
    f = _pulls(log)[-1]
    fake = f.with_name("29991231T000000000000Z-chain-r1-abcdef.parquet")
    shutil.copyfile(f, fake)
    (log / "violations" / (fake.stem + ".jsonl")).write_text("")
    return f"decisions/{fake.name}"


def _swap_pulls(log: Path) -> str:
    """The two pulls' names swapped: the older snapshot becomes the "latest" one."""
    a, b = _pulls(log)
    tmp = a.with_name("swap")
    a.rename(tmp)
    b.rename(a)
    tmp.rename(b)
    return f"decisions/{a.name}"


def _empty_violations(log: Path) -> str:
    f = sorted((log / "violations").glob("*.jsonl"))[-1]
    assert "task_modified" in f.read_text()
    f.write_text("")
    return f"violations/{f.name}"


def _reorder_chain(log: Path) -> str:
    lines = (log / decision_log.CHAIN).read_text().splitlines()
    lines[1], lines[2] = lines[2], lines[1]
    (log / decision_log.CHAIN).write_text("\n".join(lines) + "\n")
    return "chain record 2"


def _pull_records(log: Path) -> list[int]:
    """The chain record numbers of the log's pulls (the webhook receiver's attach and event
    records come between them)."""
    return [r["seq"] for r in decision_log.chain(log) if r["kind"] == "pull"]


# (how the log is edited, the chain record the error must name — "pull <i>": the i-th pull's,
# an int: that record, None: an unrecorded file — and what the error says)
TAMPER: dict[str, tuple[Callable[[Path], str], int | str | None, str]] = {
    "flipped_decision": (_flip_reject, "pull 2", "was changed after it was written"),
    "deleted_file": (_delete_first_pull, "pull 1", "is missing"),
    "inserted_file": (_insert_pull, None, "is not in the chain"),
    "reordered_files": (_swap_pulls, "pull 1", "was changed after it was written"),
    "emptied_violations": (_empty_violations, "pull 2", "was changed after it was written"),
    "reordered_chain": (_reorder_chain, 2, "does not follow record 1"),
}


@pytest.mark.label_studio
def test_the_untouched_log_verifies(log: Path, capsys):
    """A push and two pulls, with the receiver's attach and the webhook events around them, each
    record linked to the one before; status reads it."""
    recs = decision_log.chain(log)
    assert [r["kind"] for r in recs if r["kind"] not in ("event", "receiver")] == [
        "push", "pull", "pull"]
    assert (recs[0]["kind"], recs[0]["state"]) == ("receiver", "attach")
    # 2 samples x 4 projects: one ANNOTATION_CREATED each (imports send no event)
    actions = [r["action"] for r in recs if r["kind"] == "event"]
    assert ("TASKS_CREATED" in actions, actions.count("ANNOTATION_CREATED")) == (False, 8)
    assert [r["seq"] for r in recs] == list(range(1, len(recs) + 1))
    assert recs[0]["prev"] == decision_log.GENESIS
    assert [r["prev"] for r in recs[1:]] == [r["head"] for r in recs[:-1]]
    assert decision_log.verify(log) == recs[-1]["head"]
    st = statuses(decision_log.read(log, current=False), violations=decision_log.read_violations(log))
    assert (st["s1"].state, st["s2"].state) == ("excluded", "violation")
    assert cli.main(["status", "--log-dir", str(log), "--benchmark", BENCH]) == 0
    out = capsys.readouterr().out
    assert "s1\tv1\texcluded" in out and "s2\tv1\tviolation" in out


@pytest.mark.label_studio
@pytest.mark.parametrize("how", sorted(TAMPER))
def test_a_hand_edited_log_is_refused_naming_the_record(log: Path, tmp_path: Path, how: str, capsys):
    tamper, record, what = TAMPER[how]
    if isinstance(record, str):
        record = _pull_records(log)[int(record.split()[1]) - 1]
    named = tamper(log)
    with pytest.raises(decision_log.BrokenChain) as err:
        decision_log.verify(log)
    msg = str(err.value)
    assert what in msg
    assert named in msg
    if record is not None:
        assert f"chain record {record} (" in msg
    # every reader refuses it: status, the audit, the release's --decisions, and a further pull
    assert cli.main(["status", "--log-dir", str(log)]) == 2
    assert cli.main(["audit", "--log-dir", str(log), "--out", str(tmp_path / "reports")]) == 2
    errs = capsys.readouterr().err
    assert errs.count(msg) == 2
    with pytest.raises(decision_log.DecisionLogError, match="chain"):
        decision_log.read_decisions(log, BENCH)
    with pytest.raises(decision_log.BrokenChain):
        decision_log.append(log, [], benchmark=BENCH, review_round="r1")
    assert not (tmp_path / "reports").exists()


@pytest.mark.label_studio
def test_the_release_refuses_a_broken_log(log: Path, tmp_path: Path):
    """``--decisions <log>`` of a build stops before anything is built, naming the record."""
    from pipelines.streamvibe.build import run

    second_pull = _pull_records(log)[1]
    named = _flip_reject(log)
    with pytest.raises(SystemExit) as err:
        run(["--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "out"), "--decisions", str(log)])
    assert str(err.value).startswith("--decisions: ")
    assert f"chain record {second_pull} (pull of {BENCH}/r1" in str(err.value)
    assert named in str(err.value)
    assert not (tmp_path / "out").exists()


def _row(sid: str, reviewer: str, decision: str = "approve") -> dict:
    return {"benchmark": "b", "review_round": "imported", "sample_id": sid, "version": 1,
            "content_hash": "h" * 64, "task_type": "I", "reviewer": reviewer, "rater_kind": "human",
            "decision": decision, "criteria": [], "comment": "", "lead_time": 1.0,
            "created_at": "2026-12-01T00:00:00Z", "source_task_id": 1, "source_annotation_id": 1}


def test_import_records_the_file_in_the_chain(tmp_path: Path, capsys):
    """``import`` copies the file in, writes its rows as a snapshot and chains the file's sha256;
    ``verify`` and the build's provenance name it; editing the copy breaks the chain."""
    src = tmp_path / "decisions.demo.jsonl"
    src.write_text("".join(json.dumps(_row(s, f"r{i}")) + "\n" for s in ("a", "b") for i in range(1, 5)))
    sha = file_sha256(src)
    log = tmp_path / "log"
    assert cli.main(["import", str(src), "--log-dir", str(log)]) == 0
    assert f"8 decisions imported from decisions.demo.jsonl sha256 {sha}" in capsys.readouterr().out
    (rec,) = decision_log.chain(log)
    assert (rec["kind"], rec["source"]) == ("import", {"file": src.name, "sha256": sha, "rows": 8})
    assert sorted(rec["files"]) == sorted(
        f"{f.parent.name}/{f.name}" for d in ("imports", "decisions", "violations")
        for f in (log / d).iterdir())
    rows = decision_log.read_decisions(log, "b")
    assert sorted((r["sample_id"], r["reviewer"]) for r in rows) == [
        (s, f"r{i}") for s in ("a", "b") for i in range(1, 5)]
    st = statuses(rows)
    assert (st["a"].state, st["b"].state) == ("approved", "approved")
    prov = decision_log.provenance(log)
    assert prov == {"log_head": rec["head"], "log_records": len(decision_log.chain(log)),
                    "imports": [{"file": src.name, "sha256": sha, "rows": 8}]}
    assert decision_log.provenance_lines(prov) == [
        f"Review decisions from a verified decision log, head sha256 {rec['head']}.",
        f"Decisions imported from decisions.demo.jsonl sha256 {sha}."]
    assert cli.main(["verify", "--log-dir", str(log)]) == 0
    out = capsys.readouterr().out
    assert f"1 chain records, head {rec['head']}" in out
    assert f"record 1: decisions imported from decisions.demo.jsonl sha256 {sha} (8 rows)" in out
    # a file given to --decisions directly is an import without a log; the card says so
    assert decision_log.provenance(src) == {"log_head": None,
                                            "imports": [{"file": src.name, "sha256": sha}]}
    assert decision_log.provenance_lines(decision_log.provenance(src))[1] == (
        f"Decisions imported from decisions.demo.jsonl sha256 {sha}.")
    # the copy in imports/ is chained like any other file
    copy = next((log / "imports").iterdir())
    copy.write_text(copy.read_text().replace('"approve"', '"reject"', 1))
    with pytest.raises(decision_log.BrokenChain, match=r"chain record 1 \(import, written .*imports/"):
        decision_log.verify(log)


def test_import_refuses_bad_rows_and_writes_nothing(tmp_path: Path, capsys):
    src = tmp_path / "rows.jsonl"
    src.write_text(json.dumps(_row("a", "r1")) + "\n" + json.dumps(_row("a", "x@example.com")) + "\n")
    log = tmp_path / "log"
    assert cli.main(["import", str(src), "--log-dir", str(log)]) == 2
    assert "rows.jsonl: line 2: field 'reviewer' looks like it holds an e-mail address" in (
        capsys.readouterr().err)
    assert decision_log.verify(log) == decision_log.GENESIS
    assert not (log / "imports").exists()


def test_an_imported_snapshot_does_not_replace_a_pulls_violations(tmp_path: Path):
    """An import adds decisions; the latest *pull* of a round still says which violations stand
    (else importing an empty file would clear them)."""
    log = tmp_path / "log"
    viol = {"kind": "task_modified", "benchmark": "b", "review_round": "imported", "sample_id": "a",
            "version": 1, "task_id": 1, "annotation_id": -1, "reviewer": "r1", "detail": "edited"}
    decision_log.append(log, [], benchmark="b", review_round="imported", violations=[viol])
    src = tmp_path / "rows.jsonl"
    src.write_text("".join(json.dumps(_row("a", f"r{i}")) + "\n" for i in range(1, 5)))
    decision_log.import_rows(log, src)
    assert decision_log.read_violations(log) == [viol]
    # pull compares Label Studio only with what it pulled, never with imported annotation ids
    assert len(decision_log.read(log, current=False)) == 4
    assert decision_log.read(log, current=False, imported=False) == []
    st = statuses(decision_log.read(log, current=False), violations=decision_log.read_violations(log))
    assert st["a"].state == "violation"


def test_a_log_from_before_the_chain_is_refused_until_adopted(tmp_path: Path, capsys):
    """A log written before logs were chained (its chain.jsonl absent) is refused with a message
    that says so; ``verify --adopt`` chains it as it is, and the provenance says it was adopted."""
    log = tmp_path / "log"
    decision_log.append(log, [_row("a", "r1")], benchmark="b", review_round="imported")
    (log / decision_log.CHAIN).unlink()
    with pytest.raises(decision_log.BrokenChain, match="the log has no chain.jsonl"):
        decision_log.verify(log)
    assert cli.main(["verify", "--log-dir", str(log), "--adopt"]) == 0
    assert "adopted 2 unchained files" in capsys.readouterr().out
    (rec,) = decision_log.chain(log)
    assert (rec["kind"], rec["prev"], len(rec["files"])) == ("adopt", decision_log.GENESIS, 2)
    prov = decision_log.provenance(log)
    assert prov == {"log_head": rec["head"], "log_records": 1, "imports": [], "adopted_unchained": rec["at"]}
    assert "adopted into the chain unverified" in decision_log.provenance_lines(prov)[1]
    assert [r["sample_id"] for r in decision_log.read_decisions(log, "b")] == ["a"]
    assert cli.main(["verify", "--log-dir", str(log), "--adopt"]) == 2
    assert "already has a chain" in capsys.readouterr().err


def test_the_chain_streams_verified_records_and_stops_at_the_first_bad_one(tmp_path: Path):
    """``iter_chain`` (what pull reads: the webhook's events are one record each) yields the
    records ``chain`` returns, each only after it is verified; an edited record stops the stream
    there, and a file nobody recorded is found once the last record is read."""
    log = tmp_path / "log"
    for i in range(5):
        decision_log.append_record(log, "event", action="ANNOTATION_CREATED", annotations=[{"id": i}])
    assert list(decision_log.iter_chain(log)) == decision_log.chain(log)
    assert [r["seq"] for r in decision_log.iter_chain(log)] == [1, 2, 3, 4, 5]
    lines = (log / decision_log.CHAIN).read_text().splitlines()
    edited = json.loads(lines[2])
    edited["annotations"] = [{"id": 99}]
    (log / decision_log.CHAIN).write_text("\n".join([*lines[:2], json.dumps(edited), *lines[3:]]) + "\n")
    seen = []
    with pytest.raises(decision_log.BrokenChain, match="chain record 3 .* edited after it was written"):
        for rec in decision_log.iter_chain(log):
            seen.append(rec["seq"])
    assert seen == [1, 2]
    (log / decision_log.CHAIN).write_text("\n".join(lines) + "\n")
    (log / "decisions").mkdir()
    (log / "decisions" / "extra.parquet").write_bytes(b"x")
    seen = []
    with pytest.raises(decision_log.BrokenChain, match="decisions/extra.parquet is not in the chain"):
        for rec in decision_log.iter_chain(log):
            seen.append(rec["seq"])
    assert seen == [1, 2, 3, 4, 5]
