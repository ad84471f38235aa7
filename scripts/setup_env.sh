#!/usr/bin/env bash
# Create/refresh the project's virtual environment (.venv) with the pins of pyproject.toml.
# Idempotent: a stamp file records the hash of pyproject.toml + this script.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null || PY=python3
stamp="$VENV/.benchforge-setup"
want=$(cat pyproject.toml scripts/setup_env.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
echo "[setup] creating $VENV (torch 2.14.1 + torchvision 0.29.1 and the pinned stack; ~2-4 min)" >&2
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
log="$VENV/setup.log"
: > "$log"
# pip's own chatter (index warnings, build-backend deprecation notices) goes to the log; on a
# failure its end is shown.
pip_q() {
  "$VENV/bin/pip" "$@" >>"$log" 2>&1 || {
    echo "[setup] ERROR: pip $* failed; the end of $log:" >&2; tail -n 30 "$log" >&2; exit 1; }
}
pip_q install -q --upgrade pip
pip_q install -q -e ".[dev]"
# imagecorruptions-imaug depends on opencv-python (GUI build, 5.x); it and the pinned headless
# 4.12 build both own the `cv2` folder. Keep exactly one: the headless build label-studio-sdk pins.
if "$VENV/bin/pip" show -q opencv-python >/dev/null 2>&1; then
  pip_q uninstall -q -y opencv-python
  pip_q install -q --force-reinstall --no-deps "opencv-python-headless>=4.12,<4.13"
fi
"$VENV/bin/python" -c "import cv2, torch, torchvision, open_clip, apache_beam, pyarrow; assert cv2.__version__.startswith('4.12'), cv2.__version__"
echo "$want" > "$stamp"
echo "[setup] ok" >&2
