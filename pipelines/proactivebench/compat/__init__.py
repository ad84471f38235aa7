"""ProactiveBench's compat export: its releases in the layout of the authors' ``proactivebench``
package, replayed in their own classes.

It lives in the ProactiveBench folder because it is ProactiveBench-only (it parses options with
the official rules in ``pools``); ``exports/`` stays benchmark-agnostic and never imports
``pipelines``.
One module per job:

- ``convert.py``: one release episode -> one official record + images, or the reason it cannot
  be shown by the official class (the differences we found are documented there);
- ``write.py``: the export folder (``<Dataset>_preprocessed.jsonl``, images, report, README);
- ``verify.py`` + ``official_runner.py``: the replay in the authors' classes under Python 3.12;
- ``cli.py``: ``benchforge export compat-proactivebench``.
"""

from pipelines.proactivebench.compat.cli import main
from pipelines.proactivebench.compat.convert import (
    NotRepresentable,
    convert,
    iter_episodes,
    shortest_path,
)
from pipelines.proactivebench.compat.verify import (
    find_official_source,
    find_python312,
    official_check,
    policy_scripts,
    run_official,
)
from pipelines.proactivebench.compat.write import (
    CompatRejection,
    CompatResult,
    export,
    load_compat_records,
)

__all__ = [
    "CompatRejection", "CompatResult", "NotRepresentable", "convert", "export", "find_python312",
    "find_official_source", "iter_episodes", "load_compat_records", "main", "official_check",
    "policy_scripts", "run_official", "shortest_path",
]
