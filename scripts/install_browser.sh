#!/usr/bin/env bash
# Install what the review-UI browser test needs (tests/annotation/test_review_ui_browser.py):
#   - Debian's `chromium` (/usr/bin/chromium), via apt-get (running apt-get update first if the
#     install fails, as on a fresh machine with empty package lists);
#   - the `playwright` Python package into .venv (it is in the dev extra; installed here only if
#     missing). Never `playwright install`: that downloads a browser build from the internet, and
#     the test drives Debian's chromium through `executable_path` instead.
# Idempotent; needs root for apt-get. The test's session fixture runs this when /usr/bin/chromium
# is missing, so `make test` needs no extra line.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP=${PIP:-.venv/bin/pip}
PY=${PY:-.venv/bin/python}

say() { echo "[install_browser] $*" >&2; }

if [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" != 0 ]; then
    say "ERROR: /usr/bin/chromium is missing and we are not root: run 'apt-get install -y chromium' as root"
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  say "installing Debian chromium (apt-get)"
  if ! apt-get install -y -q chromium >/dev/null; then
    apt-get update -q >/dev/null
    apt-get install -y -q chromium >/dev/null
  fi
fi
[ -x /usr/bin/chromium ] || { say "ERROR: /usr/bin/chromium still missing"; exit 1; }

if ! "$PY" -c "import playwright.sync_api" 2>/dev/null; then
  say "installing playwright (Python package only; no browser download)"
  "$PIP" install -q "playwright>=1.48"
fi
say "ok: $(/usr/bin/chromium --version 2>/dev/null | head -1)"
