"""Review of benchmark candidates (design.md §Annotation rules, StreamVibe App. B.3).

Label Studio server and panel (:mod:`annotation.server`), rubrics and their label configs
(:mod:`annotation.rubrics`, :mod:`annotation.label_config`), push and pull with integrity checks
(:mod:`annotation.push`, :mod:`annotation.pull`, and the projects, media store and push records
they share, :mod:`annotation.projects`), the four-reviewer approval rule
(:mod:`annotation.approval`), the append-only decision log (:mod:`annotation.decision_log`),
agreement statistics, the Gemini reviewer and reports.
"""
