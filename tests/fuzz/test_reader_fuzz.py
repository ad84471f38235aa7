"""Fuzz of every source reader: one file of a demo dataset changed the way users change files,
then the reader run as its build runs it (``tests/fuzz/readers.py``).

What must hold for every case (design.md §Conventions "Bad input", "Nothing lost"): nothing but
BadInput escapes — a BadInput before the build (``preflight``) refuses the whole source and names
its file —, every input ends kept, filtered or rejected, every rejection names a file relative to
the source root and a field and no host folder, no item is kept twice or unusable, no line of a
line-oriented listing and no item whose file changed is lost without a word, and no case runs
for more than :data:`CASE_SECONDS`.

The video datasets' readers (``pipelines/common/video_sources``, VStream-QA) are held to the
same rule item by item — every item of ``videos()`` a native video, a filtered input or a
BadInput naming a relative file and a field, no listed video gone without a word, no string a
release cannot write — and what consumes their videos (StreamVibe's planner, ProReady's native
mapping) runs too.

``BENCHFORGE_FUZZ_CASES=N`` runs N seeds per reader (default :data:`DEFAULT_CASES`, and
:data:`VIDEO_DEFAULT_CASES` for the video datasets' readers; ``make fuzz`` runs more). A case is
named ``<reader>-<seed>`` and is rerun alone with
``pytest 'tests/fuzz/test_reader_fuzz.py::test_reader_takes_bad_input[coco-17]'``.
"""

from __future__ import annotations

import os
import shutil
import signal
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fuzz.conftest import baseline, pools
from tests.fuzz.readers import SUBJECTS, Outcome, problems
from tests.support import fuzz

DEFAULT_CASES = 30  # per reader: 300 cases for the ten image and manifest readers (~45 s on 2 cores)
# The video datasets' readers list annotations and plan from them without decoding a video (a
# case takes ~20 ms against ~150 ms), so the same time buys them more cases: 300 for the five
VIDEO_DATASETS = ("youcook2", "activitynet_captions", "charades", "ego4d", "vstream_qa", "assembly101",
                  "holoassist", "perception_test", "videocua")
VIDEO_DEFAULT_CASES = 60
CASES = os.environ.get("BENCHFORGE_FUZZ_CASES")
CASE_SECONDS = 60  # a reader that takes longer on one changed file hangs (the demo reads in < 1 s)


def cases(name: str) -> int:
    """Seeds run for reader ``name``: ``BENCHFORGE_FUZZ_CASES`` when set, else its default."""
    if CASES:
        return int(CASES)
    return VIDEO_DEFAULT_CASES if name in VIDEO_DATASETS else DEFAULT_CASES


SEEDS = [(name, seed) for name in SUBJECTS for seed in range(cases(name))]


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so no reader's ``except Exception`` turns it into a
    rejection."""


@contextmanager
def time_limit(seconds: int) -> Iterator[None]:
    def alarm(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def run_case(name: str, corpora: Path, cache: dict[str, Outcome], tmp_path: Path,
             change: Callable[[Path, list[list[str]]], fuzz.Mutation]) -> tuple[Outcome, fuzz.Mutation, Path]:
    """Copy the reader's demo folder, ``change(root, pools)`` it, run the reader; fail with the
    traceback when anything but BadInput escapes or the run hangs."""
    subject = SUBJECTS[name]
    base = baseline(name, corpora, cache, tmp_path / "baseline")
    root = tmp_path / subject.folder
    shutil.copytree(corpora / subject.folder, root, symlinks=True)
    for other in subject.beside:
        shutil.copytree(corpora / other, tmp_path / other, symlinks=True)
    mutation = change(root, pools(name, root, base))
    try:
        with time_limit(CASE_SECONDS):
            outcome = subject.run(root, tmp_path / "scratch")
    except (Exception, Hang) as exc:  # noqa: BLE001 - the point: what escapes is the failure
        tb = "".join(traceback.format_exception(exc)[-12:])
        pytest.fail(f"{name}: {mutation}\n{type(exc).__name__} escaped the reader:\n{tb}", pytrace=False)
    found = problems(subject, outcome, root, mutation, base)
    assert not found, f"{name}: {mutation}\n  " + "\n  ".join(found)
    return outcome, mutation, root


@pytest.mark.parametrize(("name", "seed"), SEEDS, ids=[f"{n}-{s}" for n, s in SEEDS])
def test_reader_takes_bad_input(name: str, seed: int, fuzz_corpora: Path,
                                baselines: dict[str, Outcome], tmp_path: Path) -> None:
    run_case(name, fuzz_corpora, baselines, tmp_path,
             lambda root, pool: fuzz.mutate(root, f"{name}:{seed}", pool))
    # a passing case's copy goes (a failing one stays to look at): pytest keeps every case's
    # folder, and BENCHFORGE_FUZZ_CASES=1000 would otherwise leave ~10 MB per case on disk
    for entry in tmp_path.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink()


# -- cases that failed once -------------------------------------------------------------------
# Each stays as it was found, replayed exactly (``fuzz.apply_at``: not through the mutator's random
# draws, which change whenever the mutator learns a new kind of change): the reader, the case
# that found it (``<reader>-<seed>`` under the mutator of the day, or "review" for one found
# reading the code the fuzz led to), the mutation — kind, file, node, value written — and the
# outcome now expected: a refusal of the whole source or a rejection naming file and field (or,
# ``filtered``, the input's file and id: an input a rule leaves out, whose reason broke a rule).
# Before the fix each ended the run with the exception named in the comment, or broke the rule
# named there.
ANN = "annotations/instances_val2014.json"
YC2_TEST = "annotations/youcookii_annotations_test_segments_only.json"
VSQA = "vstream-realtime/test_qa_ego4d.json"
FOUND = [
    # ValueError (an integer over Python's 4300 digits) out of json.loads and yaml.safe_load,
    # through every reader's except JSONDecodeError / YAMLError: a traceback before the build
    # (preflight) or in a Beam worker
    ("coco", "coco-4", "json:number:huge-int", ANN, "categories[79].id", None, ("refused", ANN, "json")),
    ("quickdraw", "quickdraw-4", "jsonl:number:huge-int", "cat.ndjson", "line 2: drawing[0][0][1]", None,
     ("rejected", "cat.ndjson:2", "json")),
    ("rod", "rod-155", "jsonl:number:huge-int", "manifest.jsonl", "line 2: informative_frames[0]", None,
     ("rejected", "manifest.jsonl:2", "json")),
    ("changeit", "changeit-1", "jsonl:number:huge-int", "manifest.jsonl", "line 4: labels[29]", None,
     ("rejected", "manifest.jsonl:4", "json")),
    ("proready", "proready-54", "yaml:number:huge-int", "manifest.yaml",
     "videos[1].annotations.clues[0].start", None, ("refused", "manifest.yaml", "yaml")),
    # RecursionError out of json.loads / yaml.safe_load: arrays nested 100000 deep
    ("coco", "coco-69", "json:deep", ANN, "categories[0]", None, ("refused", ANN, "json")),
    ("quickdraw", "quickdraw-9", "jsonl:deep", "full_simplified_The Eiffel Tower.ndjson",
     "line 2: countrycode", None, ("rejected", "full_simplified_The Eiffel Tower.ndjson:2", "json")),
    ("vsod", "vsod-51", "json:deep", "labels.json", "event[5]", None, ("refused", "labels.json", "json")),
    ("rod", "rod-18", "jsonl:deep", "manifest.jsonl", "line 2: occluding_object", None,
     ("rejected", "manifest.jsonl:2", "json")),
    ("proready", "proready-99", "yaml:deep", "manifest.yaml", "videos[2].annotations.scenes[0]", None,
     ("refused", "manifest.yaml", "yaml")),
    # _csv.Error (a cell over the csv module's 128 KiB field limit) out of ChangeIt's release layout
    ("changeit_release", "changeit_release-8", "csv:huge-field", "annotations/hand_waving/tree.fps1.csv",
     "row 28 cell 2", None, ("rejected", "annotations/hand_waving/tree.fps1.csv:28", "second,label")),
    ("changeit_release", "changeit_release-32", "csv:huge-field", "categories.csv", "row 3 cell 3", None,
     ("refused", "categories.csv:3", "csv")),
    # IndexError in ChangeIt's layout check: a file named annotations where the folder belongs
    ("changeit_release", "changeit_release-87", "fs:file-instead-of-folder", "annotations", "", None,
     ("rejected", "annotations", "path")),
    # AttributeError in StreamVibe's rule generator: native annotations of another type than the
    # task record format's
    ("streamvibe", "streamvibe-117", "json:retype", "tasks/vtest.json", "native", "12",
     ("rejected", "tasks/vtest.json", "native")),
    ("streamvibe", "streamvibe-177", "json:retype", "tasks/bikes.json", "native.events[4]", [],
     ("rejected", "tasks/bikes.json", "native")),
    # TypeError (unhashable list) in StreamVibe's listing: a request's subtype given as a list
    ("streamvibe", "review", "json:retype", "tasks/bikes.json", "requests[0].subtype", ["R"],
     ("rejected", "tasks/bikes.json", "requests[0].subtype")),
    # TypeError in ProReady-QA's load: causal pairs or clues given as a number were iterated
    ("proready", "review", "yaml:retype", "manifest.yaml", "videos[0].annotations.causal", 12,
     ("rejected", "manifest.yaml", "videos[0].annotations.causal")),
    ("proready", "review", "yaml:retype", "manifest.yaml", "videos[1].annotations.clues", True,
     ("rejected", "manifest.yaml", "videos[1].annotations.clues")),
    # UnicodeDecodeError out of ImageNet-C's preflight: a synset mapping saved in Latin-1
    ("imagenet_c", "review", "extra:file", "synset_mapping.txt", "", b"n02123045 tabby, caf\xe9\n",
     ("refused", "synset_mapping.txt", "utf-8")),
    # a host path in a rejection: an absolute path in an annotation was quoted whole
    ("coco", "coco-31", "json:path", ANN, "images[7].file_name", "<root>/coffee.jpg",
     ("rejected", ANN, "images[303].file_name")),
    ("rod", "rod-190", "jsonl:path", "manifest.jsonl", "line 1: frames[11]", "<root>/frames/apple/11.jpg",
     ("rejected", "manifest.jsonl:1", "frames[11]")),
    # ProReady-QA took a video path from its manifest as it stood: an absolute path read a file
    # outside the dataset, and the rejection named it
    ("proready", "proready-26", "yaml:path", "manifest.yaml", "videos[2].path", "/etc/hostname",
     ("rejected", "manifest.yaml", "videos[2].path")),
    # BadInput out of YouCook2's listing (videos()), halfway through: check() read only the
    # train/val annotation and the dish list, not the test-split annotation or the split lists
    # that videos() reads as a whole too
    ("youcook2", "youcook2-86", "json:retype", YC2_TEST, "database", [], ("refused", YC2_TEST, "database")),
    ("youcook2", "youcook2-121", "fs:loop-link", "splits/train_list.txt", "", None,
     ("refused", "splits/train_list.txt", "file")),
    # TypeError (unhashable list) in YouCook2's listing: a subset given as a list
    ("youcook2", "youcook2-357", "json:retype", YC2_TEST, "database.tReEtEsT001.subset", [],
     ("rejected", YC2_TEST, "database.tReEtEsT001.subset")),
    # a lone surrogate in a reason (no release can write it): a split list's recipe type with a
    # byte that is not UTF-8 was quoted in the mismatch rejection
    ("youcook2", "review", "extra:file", "splits/val_list.txt", "", b"caf\xe9/bIkEsDemo01\n",
     ("refused", "splits/val_list.txt", "utf-8")),
    # ... and a Charades id with one: the row was rejected as a video "not on disk" under an id
    # and a reason holding the surrogate
    ("charades", "charades-842", "csv:bad-utf8", "Charades/Charades_v1_test.csv", "row 2 cell 1",
     b"caf\xe9", ("rejected", "Charades/Charades_v1_test.csv:2", "id")),
    # ... and a video id (a JSON key) with one: the rejection's id, field and reason held it
    ("activitynet_captions", "activitynet_captions-1236", "bytes:insert", "val_1.json", "byte 16",
     b"\xda\xe5r", ("rejected", "val_1.json", "v_bIkEsDemo0\\xda\\xe5r1")),
    # VStream-QA's filter reason quoted a question's answer_type as it stood: a byte that is not
    # UTF-8 (a lone surrogate) or an absolute path (a host folder) went into the release
    ("vstream_qa", "vstream_qa-284", "json:bad-utf8", VSQA, "[0].answer_type", None,
     ("filtered", VSQA, "vstream_qa/question/1")),
    ("vstream_qa", "vstream_qa-285", "json:path", VSQA, "[1].answer_type", "<root>/Order Judging(Y/N)",
     ("filtered", VSQA, "vstream_qa/question/2")),
]


@pytest.mark.parametrize(("name", "found_by", "kind", "rel", "where", "new", "expected"), FOUND,
                         ids=[f"{f[1]}:{f[2]}:{f[4] or f[3]}" if f[1] == "review" else f[1] for f in FOUND])
def test_cases_that_failed_once(name: str, found_by: str, kind: str, rel: str, where: str, new: object,
                                expected: tuple[str, str, str], fuzz_corpora: Path,
                                baselines: dict[str, Outcome], tmp_path: Path) -> None:
    value = fuzz.DRAW if new is None else new
    outcome, _mutation, _root = run_case(name, fuzz_corpora, baselines, tmp_path,
                                         lambda root, _pools: fuzz.apply_at(root, kind, rel, where, value))
    how, source_file, field = expected
    if how == "refused":
        assert outcome.refused is not None, outcome.summary()
        assert (outcome.refused.source_file, outcome.refused.field) == (source_file, field)
    elif how == "filtered":  # ``field``: the filtered input's id
        assert outcome.refused is None, outcome.summary()
        assert (source_file, field) in {(f.source_file, f.item_id) for f in outcome.filtered}, \
            [(f.source_file, f.item_id, f.reason) for f in outcome.filtered]
    else:
        assert outcome.refused is None, outcome.summary()
        assert (source_file, field) in {(r.source_file, r.field) for r in outcome.rejected}, \
            [(r.source_file, r.field, r.reason) for r in outcome.rejected]


# -- videos cut short ----------------------------------------------------------------------------
# Every reader that decodes videos, each video kind of the demo (AVI with an index at the end, the
# sparse tree.avi, MP4 with its moov box at the end), cut at the start, in the middle and near the
# end: what a download interrupted at any moment leaves.
TRUNCATED = [(name, rel, frac) for name, rel in (
    ("vsod", "tree.avi"), ("changeit_release", "downloads/bicycle_riding/bikes.mp4"),
    ("changeit_release", "downloads/hand_waving/tree.avi"), ("streamvibe", "videos/vtest.avi"),
    ("proready", "video/vtest.avi"), ("proready", "video/bikes.mp4"),
) for frac in (0.001, 0.5, 0.9, 0.99)]


@pytest.mark.parametrize(("name", "rel", "frac"), TRUNCATED,
                         ids=[f"{n}-{r.rsplit('/', 1)[-1]}-{f}" for n, r, f in TRUNCATED])
def test_a_video_cut_short_is_rejected_at_load(name: str, rel: str, frac: float, fuzz_corpora: Path,
                                               baselines: dict[str, Outcome], tmp_path: Path) -> None:
    """Rejected naming the video, within :data:`CASE_SECONDS` — or kept only when what the cut
    lost of the decoded timeline is within the documented tolerance (``reject_truncated``: the
    last second of a 79.5 s AVI)."""
    from core.media.probe import TRUNCATION_TOLERANCE_S, probe_video

    def cut(root: Path, _pools: list[list[str]]) -> fuzz.Mutation:
        data = (root / rel).read_bytes()
        (root / rel).write_bytes(data[: int(len(data) * frac)])
        return fuzz.Mutation("bytes:truncate", rel, f"cut at {frac:.1%} of {len(data)} bytes")

    outcome, _mutation, root = run_case(name, fuzz_corpora, baselines, tmp_path, cut)
    readers = [sid for sid, item in baselines[name].kept.items()
               if rel in {f for f, _ in getattr(item, "source_files", [])}
               or (isinstance(item, dict) and item.get("source_file") == rel)]
    assert readers, f"no item of the demo reads {rel}"
    rejected = {r.item_id: r for r in outcome.rejected if r.source_file == rel}
    for sid in readers:
        if sid in outcome.kept:
            lost = probe_video(fuzz_corpora / SUBJECTS[name].folder / rel).duration_s - \
                probe_video(root / rel).duration_s
            assert lost <= TRUNCATION_TOLERANCE_S, f"{sid} kept though {lost:.1f} s were cut"
        else:
            assert sid in rejected, f"{sid} neither kept nor rejected naming {rel}"
            assert rejected[sid].field in ("video", "frames"), rejected[sid]
            assert rejected[sid].reason.startswith(("truncated: the header promises",
                                                    "cannot open video")), rejected[sid].reason
