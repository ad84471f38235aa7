"""Tiny copies of the video datasets' released layouts around the real registry videos — the demo
corpora of the video benchmarks are made of them (:mod:`pipelines.common.video_sources.demo.native`
writes every dataset's folder; the datasets whose layout is long have a module of their own here).

Why beside the readers: a demo layout is the reader's input, written the way the dataset's release
writes it, so a reader and the layout that exercises its every rejection path change together.
"""
