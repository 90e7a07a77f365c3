#!/usr/bin/env bash
# Serve Gated DeltaNet Explorer to a class: N app replicas on free local ports and nginx in front of them
# on 127.0.0.1:PORT, with cookie-based session affinity (deploy/nginx.conf). Runs in the foreground;
# Ctrl-C (or SIGTERM) stops nginx and every replica.
#
#     bash deploy/serve-class.sh --replicas 3 --port 8600 [--cpus-per-replica 2] [--health-timeout 60] [--logs DIR]
#
# --cpus-per-replica pins replica i to its own CPUs with taskset (replica 0 gets CPUs 0..k-1, ...).
# The supervision (health checks, restarts with backoff, stopping everything when nginx dies, the log
# folder named at start) is deploy/serve_class.py (standard library only); its docstring says what an
# operator can count on. The environment (GDN_MODEL_DIRS, GDN_ALLOW_DOWNLOADS, ...) reaches every replica.
# PYTHON names the interpreter that has the app's requirements (default: python, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
py="${PYTHON:-$(command -v python || command -v python3)}"
supervisor="$(command -v python3 || echo "$py")"      # any Python 3.9+: the supervisor needs no package
exec "$supervisor" deploy/serve_class.py --python "$py" "$@"
