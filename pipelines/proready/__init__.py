"""ProReady-QA (StreamReady §4): long videos with future-dependent questions and evidence windows.

* :mod:`pipelines.proready.sources` — source manifest of long videos + native annotations;
* :mod:`pipelines.proready.templates` — offline template questions per task type (SSR, REC, CRR,
  CTD, GSD) and multi-turn chains;
* :mod:`pipelines.proready.models` / :mod:`pipelines.proready.generation` — the App. C LLM/VLM
  path (dense captions, summaries, QA) through the model-client layer (:mod:`clients`);
* :mod:`pipelines.proready.evidence` — evidence windows, dwell smoothing, task rules, validation;
* :mod:`pipelines.proready.review` — Label Studio review through :mod:`annotation`;
* :mod:`pipelines.proready.quality` — data-quality suite and the App. C QC report;
* :mod:`pipelines.proready.pipeline` / :mod:`pipelines.proready.build` — Beam pipeline, driver;
* :mod:`pipelines.proready.ars` — the Answer Readiness Score (§4.3, Eq. 9–11, App. B.2).
"""
