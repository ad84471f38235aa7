"""The lowest shared layer: hashing, atomic files, seeding, bad-input errors, progress, media.

Everything above (model clients, filtering, annotation, exports, pipelines) may import it; it
imports nothing of theirs.
"""
