"""Shared media transforms: image decode/encode/crop, QuickDraw strokes, ImageNet-C corruptions,
video frame sampling. Every function here is deterministic: same input bytes + arguments give the
same output bytes (design.md §Conventions), so a release does not change when it is rebuilt on another worker.
"""
