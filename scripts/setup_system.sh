#!/usr/bin/env bash
# System tools the code and the tests use, from Debian's packages. A fresh machine has none of
# them, so `make setup` (and through it `make test` and .ci/run) installs them here; nothing in
# the code or the tests checks whether they "happen to be installed".
#
#   media    opencv-doc  the real photos and videos the demo corpora are built from
#   video    ffmpeg      H.264 review media (browsers do not play OpenCV's mp4v) and ffprobe
#   browser  chromium    the review-UI tests drive Debian's Chromium with playwright
#
# Usage: scripts/setup_system.sh [media] [video] [browser]   (no argument: all of them)
# Idempotent and quick when everything is present; needs root for apt-get otherwise.
set -euo pipefail

say() { echo "[setup-system] $*" >&2; }
die() { say "ERROR: $*"; exit 1; }

groups=("$@")
[ ${#groups[@]} -gt 0 ] || groups=(media video browser)

need=()
for g in "${groups[@]}"; do
  case "$g" in
    media)   [ -e /usr/share/doc/opencv-doc/examples/data ] || need+=(opencv-doc) ;;
    video)   command -v ffmpeg >/dev/null && command -v ffprobe >/dev/null || need+=(ffmpeg) ;;
    browser) [ -x /usr/bin/chromium ] || need+=(chromium) ;;
    *) die "unknown group '$g' (media | video | browser)" ;;
  esac
done

if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing Debian packages ${need[*]}; as root run: apt-get install -y ${need[*]}"
  command -v apt-get >/dev/null || die "missing ${need[*]} and apt-get is unavailable"
  export DEBIAN_FRONTEND=noninteractive
  say "installing Debian packages: ${need[*]} (apt-get; about a minute on a fresh machine)"
  if ! apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null 2>&1; then
    say "apt-get install failed; running apt-get update first"
    apt-get update -q >/dev/null || die "apt-get update failed (no network or apt mirror?)"
    apt-get install -y -q --no-install-recommends "${need[@]}" >/dev/null \
      || die "apt-get install ${need[*]} failed"
  fi
fi

# Check what each tool is needed for, not only that it exists.
for g in "${groups[@]}"; do
  case "$g" in
    media) [ -e /usr/share/doc/opencv-doc/examples/data ] || die "opencv-doc has no examples/data" ;;
    video) encoders=$(ffmpeg -hide_banner -encoders 2>/dev/null)
           grep -q ' libx264 ' <<<"$encoders" || die "ffmpeg has no libx264 (H.264) encoder" ;;
    browser) /usr/bin/chromium --version >/dev/null 2>&1 || die "/usr/bin/chromium does not start" ;;
  esac
done
say "ok: ${groups[*]}"
