#!/usr/bin/env bash
# Start/stop the project's local Label Studio (used by `make label-studio` / `make label-studio-stop`).
#   scripts/label_studio.sh start   # installs .venv-ls once (1-6 min, pip's output in
#                                   # .venv-ls/install.log), starts the webhook receiver and
#                                   # the server on 127.0.0.1, waits for /health, then creates
#                                   # admin + reviewer panel
#   scripts/label_studio.sh stop
#   scripts/label_studio.sh status
# Options and paths come from configs/review_panel.yaml; extra args are passed through
# (e.g. --port 8081 --media-root /data/review-media). Tokens go to the owner-only credential
# files (the admin's in the token file, each reviewer's in reviewers/r<i>.json beside it), never
# to this script's output.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
action=${1:-start}
shift || true
case "$action" in
  start)
    "$PY" -m annotation.cli server start "$@"
    "$PY" -m annotation.cli panel ensure "$@"
    ;;
  stop|status)
    "$PY" -m annotation.cli server "$action" "$@"
    ;;
  *)
    echo "usage: $0 start|stop|status [--data-dir D] [--port P] [--media-root M]" >&2
    exit 2
    ;;
esac
