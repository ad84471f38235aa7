"""Single source of truth for every record type (see :mod:`schemas.core`).

A benchmark kept outside this repository brings its record types in ``<root>/schemas/``, found
through ``BENCHFORGE_EXTENSIONS`` (see :mod:`pipelines`), so the registry
(:mod:`schemas.registry`) knows them like the ones here.
"""

import os

__path__ = [*__path__, *(os.path.join(root, "schemas")
                         for root in os.environ.get("BENCHFORGE_EXTENSIONS", "").split(os.pathsep)
                         if root and os.path.isdir(os.path.join(root, "schemas")))]
