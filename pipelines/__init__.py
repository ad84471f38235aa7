"""Apache Beam pipelines: one package per benchmark, source readers, shared media transforms.

A benchmark folder may also live outside this repository: every folder named in the environment
variable ``BENCHFORGE_EXTENSIONS`` (``os.pathsep``-separated) that holds a ``pipelines/``
folder adds its benchmark folders to this package (and its ``schemas/`` folder its record types
to :mod:`schemas`), so ``benchforge build <name>`` and every worker process a runner starts
(they inherit the environment) import them as ``pipelines.<name>``, as if they were here.
"""

import os

__path__ = [*__path__, *(os.path.join(root, "pipelines")
                         for root in os.environ.get("BENCHFORGE_EXTENSIONS", "").split(os.pathsep)
                         if root and os.path.isdir(os.path.join(root, "pipelines")))]
