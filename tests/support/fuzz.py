"""A seeded mutator of dataset folders: the bad input users produce, made from good input.

Why a mutator and not a list of hand-written bad files: every bad file written by hand is one
someone already thought of, and the readers handle those. What reaches a build is whatever a
download, an editor, a copy tool or a script left behind: a file cut short, bytes changed, a
number a spreadsheet wrote as ``NaN`` or ``1e999``, a key deleted or given another type, text in
another encoding, a symbolic link that dangles or loops, a folder where a file belonged, a file
nobody listed. This module makes each of those from the demo corpus's real files, so the readers
are tested on input nobody listed.

Every case is named by its seed: :func:`mutate` draws everything from ``random.Random(seed)``
and returns a :class:`Mutation` that says what it did, so a failing case is rerun by its seed;
:func:`apply_at` replays a mutation by what it names (kind, file, node, value), so a regression
test keeps testing the same change when the mutator learns new ones and its draws move.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import posixpath
import random
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

JSON_SUFFIXES = (".json",)
LINE_SUFFIXES = (".jsonl", ".ndjson")
YAML_SUFFIXES = (".yaml", ".yml")
CSV_SUFFIXES = (".csv",)
STRUCTURED = JSON_SUFFIXES + LINE_SUFFIXES + YAML_SUFFIXES + CSV_SUFFIXES
# a string ending so names a file (a path change applies to it)
FILE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".avi", ".mp4", ".mkv", ".webm", ".json", ".csv")

# What a number becomes: what spreadsheets, numpy and hand edits write (JSON readers in Python
# take NaN / Infinity; 1e999 overflows to infinity; an integer of 5000 digits is over Python's
# limit for int <-> str conversion, 4300 digits, and raises ValueError, not a JSON error).
NUMBER_TOKENS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity", "1e999": "1e999",
                 "huge-int": "9" * 5000, "negative": None, "zero": "0"}
YAML_NUMBER_TOKENS = {"nan": ".nan", "inf": ".inf", "-inf": "-.inf", "1e999": "1e999",
                      "huge-int": "9" * 5000, "negative": None, "zero": "0"}
CSV_NUMBER_TOKENS = {"nan": "NaN", "inf": "inf", "-inf": "-inf", "1e999": "1e999",
                     "huge-int": "9" * 5000, "negative": None, "zero": "0"}
# Bytes that are not UTF-8: Latin-1 / CP1252 text (an editor's "save as"), a lone continuation
# byte, an overlong encoding, a UTF-16 byte order mark.
BAD_UTF8 = (b"\xe9", b"\x80", b"\xc0\xaf", b"\xff\xfe", b"caf\xe9")
# Names of extra files: ones the layouts know, ones they do not, a dot-file.
EXTRA_NAMES = ("notes.txt", "README.md", "extra.ndjson", "extra.jsonl", "extra.json", "extra.jpg",
               "extra.png", "extra.avi", "extra.mp4", "extra.csv", "labels.json",
               "synset_mapping.txt", "categories.csv", "manifest.jsonl", ".DS_Store", "Thumbs.db",
               "n01234567", "copy of a file")
_PLACEHOLDER = "FUZZMARK"  # plain ASCII: no serializer escapes it, no demo file holds it


@dataclass(frozen=True)
class Mutation:
    """What one case did to the copy of a dataset: ``kind`` (e.g. ``json:retype``), ``path``
    (relative to the dataset root: the file changed, replaced or added) and ``detail`` (where
    and how, e.g. ``images[2].bbox[1]: 150.0 -> NaN``)."""

    kind: str
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.kind} {self.path}: {self.detail}"


def files_under(root: Path) -> list[str]:
    """Every regular file under ``root`` (relative, sorted; links are not followed)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if full.is_file() and not full.is_symlink():
                out.append(full.relative_to(root).as_posix())
    return sorted(out)


def folders_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_dir()
                  and not p.is_symlink())


# -- byte level: any file ---------------------------------------------------------------------

def truncate(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    at = rng.randrange(len(data)) if data else 0
    path.write_bytes(data[:at])
    return f"cut at byte {at} of {len(data)}"


def flip(path: Path, rng: random.Random) -> str:
    data = bytearray(path.read_bytes())
    if not data:
        data = bytearray(b"\x00")
    spots = sorted(rng.randrange(len(data)) for _ in range(rng.choice((1, 1, 2, 4, 16))))
    for at in spots:
        data[at] ^= rng.randrange(1, 256)
    path.write_bytes(bytes(data))
    return f"bytes flipped at {spots[:8]}{' …' if len(spots) > 8 else ''} of {len(data)}"


def insert(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    at = rng.randrange(len(data) + 1)
    extra = bytes(rng.randrange(256) for _ in range(rng.choice((1, 3, 16))))
    path.write_bytes(data[:at] + extra + data[at:])
    return f"{len(extra)} bytes {extra[:8].hex()} inserted at {at} of {len(data)}"


def empty(path: Path, rng: random.Random) -> str:
    n = path.stat().st_size
    path.write_bytes(b"")
    return f"emptied ({n} bytes before)"


def bom(path: Path, rng: random.Random) -> str:
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    return "a UTF-8 byte order mark put first (what Windows editors save)"


def crlf(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    path.write_bytes(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    return "line endings made \\r\\n"


BYTE_MUTATIONS: dict[str, Callable[[Path, random.Random], str]] = {
    "bytes:truncate": truncate, "bytes:flip": flip, "bytes:insert": insert, "bytes:empty": empty}
TEXT_MUTATIONS: dict[str, Callable[[Path, random.Random], str]] = {"text:bom": bom, "text:crlf": crlf}


# -- the file system: links, folders, missing files -------------------------------------------

def dangling_link(path: Path, rng: random.Random) -> str:
    path.unlink()
    target = rng.choice(("missing.jpg", "../nowhere/x", "does-not-exist"))
    os.symlink(target, path)
    return f"a symbolic link to {target} (does not exist)"


def loop_link(path: Path, rng: random.Random) -> str:
    path.unlink()
    if rng.random() < 0.5:
        os.symlink(path.name, path)
        return "a symbolic link to itself"
    other = path.with_name(path.name + ".loop")
    os.symlink(path.name, other)
    os.symlink(other.name, path)
    return f"a symbolic link loop through {other.name}"


def link_to_folder(path: Path, rng: random.Random) -> str:
    path.unlink()
    target = rng.choice((".", ".."))
    os.symlink(target, path)
    return f"a symbolic link to the folder {target!r}"


def folder_instead(path: Path, rng: random.Random) -> str:
    data = path.read_bytes()
    path.unlink()
    path.mkdir()
    if rng.random() < 0.5:
        (path / path.name).write_bytes(data)
        return "a folder holding the file where the file was"
    return "an empty folder where the file was"


def remove(path: Path, rng: random.Random) -> str:
    path.unlink()
    return "deleted"


FS_MUTATIONS: dict[str, Callable[[Path, random.Random], str]] = {
    "fs:dangling-link": dangling_link, "fs:loop-link": loop_link, "fs:link-to-folder": link_to_folder,
    "fs:folder-instead": folder_instead, "fs:remove": remove}


def file_instead_of_folder(root: Path, rng: random.Random) -> Mutation | None:
    folders = folders_under(root)
    if not folders:
        return None
    rel = rng.choice(folders)
    shutil.rmtree(root / rel)
    (root / rel).write_bytes(b"not a folder\n")
    return Mutation("fs:file-instead-of-folder", rel, "the folder replaced by a 13-byte file")


def extra_file(root: Path, rng: random.Random) -> Mutation:
    """A file nobody listed, in the root or a folder of it: empty, text, random bytes, or a
    copy of another file of the dataset (a duplicate a copy tool left)."""
    folder = rng.choice(["", "", *folders_under(root)])
    name = rng.choice(EXTRA_NAMES)
    target = root / folder / name
    if target.exists() or target.is_symlink():
        name = f"fuzz-{rng.randrange(10**6)}-{name}"
        target = root / folder / name
    files = files_under(root)
    how = rng.choice(("empty", "text", "random", "copy"))
    if how == "copy" and files:
        src = rng.choice(files)
        target.write_bytes((root / src).read_bytes())
        how = f"a copy of {src}"
    elif how == "text":
        target.write_text("written by hand\n")
    elif how == "random":
        target.write_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 256))))
        how = "random bytes"
    else:
        target.write_bytes(b"")
    rel = target.relative_to(root).as_posix()
    return Mutation("extra:file", rel, how)


# -- structured text: JSON, JSON lines, YAML, CSV ---------------------------------------------

def _nodes(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    """Every (path, value) of a parsed document, the root included."""
    out = [(path, doc)]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _nodes(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _nodes(v, (*path, i))
    return out


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def _delete(doc: Any, path: tuple[Any, ...]) -> None:
    del _get(doc, path[:-1])[path[-1]]


def _shown(path: tuple[Any, ...]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "<document>"


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _retyped(value: Any, rng: random.Random) -> Any:
    """``value`` as another JSON type: string <-> number <-> list <-> null (and bool, object)."""
    choices: list[Any] = ["12", 12, 7.5, [], [value], None, True, {}, "", "  "]
    if isinstance(value, str) and value:
        choices += [len(value)]
    if _is_number(value):
        choices += [str(value)]
    kind = type(value)
    other = [c for c in choices if type(c) is not kind or (isinstance(c, list) and c != value)]
    return rng.choice(other)


def _looks_like_path(v: Any) -> bool:
    return isinstance(v, str) and ("/" in v or posixpath.splitext(v)[1].lower() in FILE_SUFFIXES)


def _path_variant(value: str, rng: random.Random, root: Path) -> str:
    """What users write for a path: absolute (to the very file, inside the root, or elsewhere),
    with ``../``, as a URL, with Windows separators, with ``./``."""
    return rng.choice((str(root / value), "/etc/hostname", f"../{value}", f"../../{value}",
                       f"https://example.com/{value}", value.replace("/", "\\"), f"./{value}",
                       f"{value}/", f"{posixpath.dirname(value) or '.'}/"))


def _eligible(doc: Any, op: str) -> list[tuple[tuple[Any, ...], Any]]:
    """The nodes ``op`` applies to."""
    nodes = _nodes(doc)
    if op.startswith("number:"):
        return [(p, v) for p, v in nodes if _is_number(v)]
    if op == "delete":
        return [(p, v) for p, v in nodes if p and isinstance(p[-1], str)]
    if op == "bad-utf8":
        return [(p, v) for p, v in nodes if isinstance(v, str) and v]
    if op == "path":
        return [(p, v) for p, v in nodes if _looks_like_path(v)]
    if op == "duplicate":
        return [(p, v) for p, v in nodes if p and isinstance(p[-1], int)]
    return [(p, v) for p, v in nodes if p]  # retype, deep


DRAW = object()  # _change() / apply_at(): draw the new value (None is a value a retype writes)


def _tree_mutation(doc: Any, rng: random.Random, op: str, tokens: dict[str, str | None],
                   root: Path) -> tuple[Any, str, dict[str, tuple[bytes, bool]]] | None:
    """Apply ``op`` to a random eligible node of a parsed document (:func:`_change`). The depth
    is drawn first, then a node at that depth: drawn among all nodes, a key such as ProReady's
    ``annotations.causal`` is one of hundreds of numbers and strings below it, and the value
    a reader iterates over would almost never be the one changed."""
    eligible = _eligible(doc, op)
    if not eligible:
        return None
    depth = rng.choice(sorted({len(p) for p, _ in eligible}))
    path, _value = rng.choice([(p, v) for p, v in eligible if len(p) == depth])
    return _change(doc, path, op, tokens, root, rng)


def _change(doc: Any, path: tuple[Any, ...], op: str, tokens: dict[str, str | None], root: Path,
            rng: random.Random, new: Any = DRAW) -> tuple[Any, str, dict[str, tuple[bytes, bool]]]:
    """Apply ``op`` at ``path`` (``new``: the value a retype or path change writes, drawn when
    not given). Returns the new document, what was done, and placeholders to replace by raw
    bytes after serialising — what a serializer will not write: a number as ``tokens`` spells
    it (NaN, a 5000-digit integer; ``True``: the serializer quoted the placeholder, the quotes
    go too) or bytes that are not UTF-8."""
    value = _get(doc, path)
    if op == "delete":
        _delete(doc, path)
        return doc, f"{_shown(path)} deleted", {}
    if op == "retype":
        new = _retyped(value, rng) if new is DRAW else new
        return _set(doc, path, new), f"{_shown(path)}: {_short(value)} -> {_short(new)}", {}
    if op == "path":
        new = _path_variant(value, rng, root) if new is DRAW else new
        return _set(doc, path, new), f"{_shown(path)}: {value!r} -> {new!r}", {}
    if op == "duplicate":
        parent = _get(doc, path[:-1])
        parent.insert(path[-1] + 1, copy.deepcopy(value))
        return doc, f"{_shown(path)} given twice", {}
    marker = f"{_PLACEHOLDER}{rng.randrange(10**9)}{_PLACEHOLDER}"
    if op == "bad-utf8":
        raw = rng.choice(BAD_UTF8)
        at = rng.randrange(len(value) + 1)
        return (_set(doc, path, value[:at] + marker + value[at:]),
                f"{_shown(path)}: bytes {raw.hex()} put in the string at {at}", {marker: (raw, False)})
    if op == "deep":  # what a runaway script writes: arrays nested 100000 deep
        token = "[" * 100_000 + "]" * 100_000
        return (_set(doc, path, marker), f"{_shown(path)}: {_short(value)} -> arrays nested 100000 deep",
                {marker: (token.encode(), True)})
    token = tokens[op[len("number:"):]]
    if token is None:  # negative
        token = repr(-abs(value) if value else -1)
    shown = token if len(token) <= 20 else f"{token[:3]}... ({len(token)} digits)"
    return (_set(doc, path, marker), f"{_shown(path)}: {_short(value)} -> {shown}",
            {marker: (token.encode(), True)})


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _parsed(shown: str) -> tuple[Any, ...]:
    """:func:`_shown` read back: ``videos[2].annotations.causal`` → ``("videos", 2, ...)``."""
    return tuple(int(i) if i else k for k, i in re.findall(r"([^.\[\]]+)|\[(\d+)\]", shown))


def _short(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, allow_nan=True)
    return text if len(text) <= 40 else text[:37] + "..."


def _serialised(text: str, placeholders: dict[str, tuple[bytes, bool]]) -> bytes:
    data = text.encode("utf-8")
    for marker, (raw, unquote) in placeholders.items():
        if unquote:
            for q in (b'"', b"'"):
                data = data.replace(q + marker.encode() + q, raw)
        data = data.replace(marker.encode(), raw)
    return data


TREE_OPS = ("number:nan", "number:inf", "number:-inf", "number:1e999", "number:huge-int",
            "number:negative", "number:zero", "delete", "retype", "retype", "bad-utf8", "path",
            "path", "duplicate", "deep")


def _mutate_tree(path: Path, doc: Any, rng: random.Random, op: str, dump: Callable[[Any], str],
                 tokens: dict[str, str | None], root: Path) -> str | None:
    done = _tree_mutation(doc, rng, op, tokens, root)
    if done is None:
        return None
    new, detail, placeholders = done
    path.write_bytes(_serialised(dump(new), placeholders))
    return detail


def mutate_json(path: Path, rng: random.Random, op: str, root: Path) -> str | None:
    try:
        doc = json.loads(path.read_bytes())
    except ValueError:
        return None
    return _mutate_tree(path, doc, rng, op, lambda d: json.dumps(d, ensure_ascii=False, indent=1),
                        NUMBER_TOKENS, root)


def mutate_json_lines(path: Path, rng: random.Random, op: str, root: Path) -> str | None:
    lines = path.read_bytes().split(b"\n")
    candidates = [i for i, raw in enumerate(lines) if raw.strip()]
    rng.shuffle(candidates)
    if op == "duplicate" and candidates:  # a line pasted twice
        i = candidates[0]
        lines.insert(i + 1, lines[i])
        path.write_bytes(b"\n".join(lines))
        return f"line {i + 1} given twice"
    for i in candidates:
        try:
            doc = json.loads(lines[i])
        except ValueError:
            continue
        done = _tree_mutation(doc, rng, op, NUMBER_TOKENS, root)
        if done is None:
            continue
        new, detail, placeholders = done
        lines[i] = _serialised(json.dumps(new, ensure_ascii=False), placeholders)
        path.write_bytes(b"\n".join(lines))
        return f"line {i + 1}: {detail}"
    return None


def mutate_yaml(path: Path, rng: random.Random, op: str, root: Path) -> str | None:
    try:
        doc = yaml.safe_load(path.read_bytes())
    except (yaml.YAMLError, ValueError):
        return None
    return _mutate_tree(path, doc, rng, op,
                        lambda d: yaml.safe_dump(d, sort_keys=False, allow_unicode=True, width=1000),
                        YAML_NUMBER_TOKENS, root)


CSV_OPS = ("number:nan", "number:inf", "number:1e999", "number:huge-int", "number:negative",
           "delete", "retype", "bad-utf8", "huge-field", "extra-column", "duplicate")


def mutate_csv(path: Path, rng: random.Random, op: str, root: Path) -> str | None:
    try:
        rows = list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))
    except (UnicodeDecodeError, csv.Error):
        return None
    cells = [(r, c) for r, row in enumerate(rows) for c in range(len(row))]
    if op.startswith("number:"):
        cells = [(r, c) for r, c in cells if _float(rows[r][c]) is not None]
    if not cells:
        return None
    r, c = rng.choice(cells)
    old = rows[r][c]
    raw: bytes | None = None
    if op.startswith("number:"):
        token = CSV_NUMBER_TOKENS[op[7:]]
        rows[r][c] = token if token is not None else repr(-abs(_float(old) or 1))
        detail = f"row {r + 1} cell {c + 1}: {old!r} -> {op[7:]}"
    elif op == "delete":
        del rows[r][c]
        detail = f"row {r + 1}: cell {c + 1} ({old!r}) deleted"
    elif op == "retype":
        rows[r][c] = rng.choice(("x", "", "[1, 2]", "null", "true", " 3 "))
        detail = f"row {r + 1} cell {c + 1}: {old!r} -> {rows[r][c]!r}"
    elif op == "bad-utf8":
        raw = rng.choice(BAD_UTF8)
        rows[r][c] = old + _PLACEHOLDER
        detail = f"row {r + 1} cell {c + 1}: bytes {raw.hex()} appended"
    elif op == "duplicate":
        rows.insert(r + 1, list(rows[r]))
        detail = f"row {r + 1} given twice"
    elif op == "huge-field":
        rows[r][c] = "a" * 200_000  # over the csv module's field limit (131072)
        detail = f"row {r + 1} cell {c + 1}: 200000 characters"
    else:
        rows[r].append("extra")
        detail = f"row {r + 1}: a column appended"
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    data = buf.getvalue().encode("utf-8")
    if raw is not None:
        data = data.replace(_PLACEHOLDER.encode(), raw)
    path.write_bytes(data)
    return detail


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def structured_mutation(path: Path, rng: random.Random, root: Path) -> tuple[str, str] | None:
    """A change to the content of a JSON / JSON-lines / YAML / CSV file, as (kind, detail);
    ``None`` when the file does not parse or has no node the drawn change applies to. ``root``:
    the dataset root (an absolute path a user writes points into it)."""
    suffix = path.suffix.lower()
    if suffix in CSV_SUFFIXES:
        op = rng.choice(CSV_OPS)
        detail = mutate_csv(path, rng, op, root)
        return (f"csv:{op}", detail) if detail else None
    op = rng.choice(TREE_OPS)
    if suffix in JSON_SUFFIXES:
        detail, fmt = mutate_json(path, rng, op, root), "json"
    elif suffix in LINE_SUFFIXES:
        detail, fmt = mutate_json_lines(path, rng, op, root), "jsonl"
    elif suffix in YAML_SUFFIXES:
        detail, fmt = mutate_yaml(path, rng, op, root), "yaml"
    else:
        return None
    return (f"{fmt}:{op}", detail) if detail else None


# -- one case ----------------------------------------------------------------------------------

def mutate(root: Path, seed: int | str, pools: list[list[str]] | None = None) -> Mutation:
    """Change the dataset under ``root`` in one way drawn from ``random.Random(seed)``.

    ``pools``: lists of files (relative) to pick from — say the files that list the candidates,
    the videos, the files the items read — one pool drawn at random, then one file of it, so a
    few listing files are changed as often as the many frames; the last pool is every file under
    the root. Structured files get structured changes most of the time, every file byte and
    file-system changes; a few cases add a file nobody listed or put a file where a folder was."""
    rng = random.Random(f"fuzz:{seed}")
    files = files_under(root)
    roll = rng.random()
    if roll < 0.08 or not files:
        return extra_file(root, rng)
    if roll < 0.10:
        done = file_instead_of_folder(root, rng)
        if done is not None:
            return done
    choices = [[f for f in pool if f in files] for pool in (pools or [])] + [files]
    rel = rng.choice(rng.choice([c for c in choices if c]))
    path = root / rel
    structured = path.suffix.lower() in STRUCTURED
    kind_roll = rng.random()
    if structured and kind_roll < 0.6:
        for _ in range(4):
            done = structured_mutation(path, rng, root)
            if done is not None:
                return Mutation(done[0], rel, done[1])
    if (structured or path.suffix.lower() == ".txt") and kind_roll < 0.65:
        kind = rng.choice(sorted(TEXT_MUTATIONS))
        return Mutation(kind, rel, TEXT_MUTATIONS[kind](path, rng))
    if kind_roll < 0.8:
        kind = rng.choice(sorted(BYTE_MUTATIONS))
        return Mutation(kind, rel, BYTE_MUTATIONS[kind](path, rng))
    kind = rng.choice(sorted(FS_MUTATIONS))
    return Mutation(kind, rel, FS_MUTATIONS[kind](path, rng))


def apply_at(root: Path, kind: str, rel: str, where: str, new: Any = DRAW) -> Mutation:
    """One mutation exactly as a case once made it, for regression tests that must not depend
    on the mutator's random draws: ``kind`` as :class:`Mutation` names it, ``rel`` the file,
    ``where`` the node as the mutation's detail names it (``categories[79].id``; for JSON lines
    ``line 2: drawing[0]``; for CSV ``row 28 cell 2``; nothing for a file-system change), ``new``
    the value a retype or path change writes (``<root>`` in it: the dataset root), the bytes
    of a file nobody listed, the bytes a CSV ``bad-utf8`` appends to its cell, or those a
    ``bytes:insert`` puts at ``byte <offset>``. A file-system
    change (``fs:loop-link``) names only the file: what it writes is drawn from a fixed seed."""
    rng = random.Random(0)  # only markers, the bytes of bad-utf8 and a link's shape are drawn
    path = root / rel
    fmt, _, op = kind.partition(":")
    if isinstance(new, str):
        new = new.replace("<root>", str(root))
    if kind == "extra:file":  # ``new``: its bytes
        path.write_bytes(new)
        return Mutation(kind, rel, f"{len(new)} bytes")
    if kind == "fs:file-instead-of-folder":
        shutil.rmtree(path)
        path.write_bytes(b"not a folder\n")
        return Mutation(kind, rel, "the folder replaced by a 13-byte file")
    if kind in FS_MUTATIONS:
        return Mutation(kind, rel, FS_MUTATIONS[kind](path, rng))
    if kind == "bytes:insert":  # ``where``: ``byte <offset>``; ``new``: the bytes put there
        at = int(re.fullmatch(r"byte (\d+)", where).group(1))
        data = path.read_bytes()
        path.write_bytes(data[:at] + new + data[at:])
        return Mutation(kind, rel, f"{len(new)} bytes {new.hex()} inserted at {at} of {len(data)}")
    if fmt == "csv":
        r, c = (int(n) - 1 for n in re.fullmatch(r"row (\d+) cell (\d+)", where).groups())
        rows = list(csv.reader(io.StringIO(path.read_bytes().decode("utf-8"), newline="")))
        raw = b""
        if op == "huge-field":
            rows[r][c], detail = "a" * 200_000, "200000 characters"
        elif op == "bad-utf8":
            raw = rng.choice(BAD_UTF8) if new is DRAW else new
            rows[r][c], detail = rows[r][c] + _PLACEHOLDER, f"bytes {raw.hex()} appended"
        else:
            raise ValueError(f"apply_at: {kind} not supported")
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerows(rows)
        path.write_bytes(buf.getvalue().encode("utf-8").replace(_PLACEHOLDER.encode(), raw))
        return Mutation(kind, rel, f"{where}: {detail}")
    line = None
    if fmt == "jsonl":
        found = re.fullmatch(r"line (\d+): (.*)", where)
        line, where = int(found.group(1)), found.group(2)
    node = _parsed(where)
    if fmt == "json":
        doc, tokens = json.loads(path.read_bytes()), NUMBER_TOKENS
        done = _change(doc, node, op, tokens, root, rng, new)
        path.write_bytes(_serialised(json.dumps(done[0], ensure_ascii=False, indent=1), done[2]))
    elif fmt == "jsonl":
        lines = path.read_bytes().split(b"\n")
        done = _change(json.loads(lines[line - 1]), node, op, NUMBER_TOKENS, root, rng, new)
        lines[line - 1] = _serialised(json.dumps(done[0], ensure_ascii=False), done[2])
        path.write_bytes(b"\n".join(lines))
    elif fmt == "yaml":
        done = _change(yaml.safe_load(path.read_bytes()), node, op, YAML_NUMBER_TOKENS, root, rng, new)
        path.write_bytes(_serialised(
            yaml.safe_dump(done[0], sort_keys=False, allow_unicode=True, width=1000), done[2]))
    else:
        raise ValueError(f"apply_at: {kind} not supported")
    return Mutation(kind, rel, (f"line {line}: " if line else "") + done[1])
