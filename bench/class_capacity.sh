#!/usr/bin/env bash
# The class-capacity runs of issues 24, 28 and 38 in one go, on a machine with at least 10 cores (one H200 host:
# 16): the live class with 200 phones through 4 replicas on both stores, then one replica pinned to CPUs 0-1
# serving 60 sessions measured directly, through deploy/serve-class.sh's nginx on CPUs of its own, and
# through nginx sharing the replica's CPUs (the proxy path's costs, told apart); and the replica with heavy
# work pressed at once: REAL Runs and TRAIN recall trainings (each checked against the seed trained
# alone). Results in OUT (default
# bench/out-class/). Needs the app's requirements, nginx and PostgreSQL's initdb/pg_ctl on PATH (or Debian's
# /usr/lib/postgresql/*/bin).
#
#     bash bench/class_capacity.sh [OUT]            # CLIENT_CPU=8 NGINX_CPUS=4-5 by default
set -u
cd "$(dirname "$0")/.."
OUT="${1:-bench/out-class}"; mkdir -p "$OUT"
CLIENT_CPU="${CLIENT_CPU:-8}"; NGINX_CPUS="${NGINX_CPUS:-4-5}"
STUDENTS="${STUDENTS:-200}"; REPLICAS="${REPLICAS:-4}"; WINDOW="${WINDOW:-30}"
SESSIONS="${SESSIONS:-60}"; REAL="${REAL:-5}"; DURATION="${DURATION:-65}"; RAMP="${RAMP:-15}"
TRAIN="${TRAIN:-5}"; TRAIN_DURATION="${TRAIN_DURATION:-200}"   # trainings pressed together, browsing meanwhile
py="${PYTHON:-$(command -v python || command -v python3)}"
export PYTHONUNBUFFERED=1 PYTHON="$py"
say() { echo "[$(date -u +%T)] $*" | tee -a "$OUT/steps.txt"; }
"$py" -c "import bench.live_class, bench.load_ws" || { say "the benches cannot be imported (above): stopping"; exit 1; }

if [ "${LIVE:-1}" = 1 ]; then     # LIVE=0: the capacity runs only
  say "live class: $STUDENTS students, $REPLICAS replicas, SQLite then PostgreSQL"
  timeout -s INT 320 "$py" bench/live_class.py --students "$STUDENTS" --replicas "$REPLICAS" --window "$WINDOW" \
      --store both 2>&1 | tee "$OUT/live_class.txt"
fi
load() { timeout -s INT $((DURATION + RAMP + 60)) "$py" bench/load_ws.py --sessions "$SESSIONS" --real "$REAL" --think 2 --duration "$DURATION" \
    --ramp "$RAMP" --server-cpus 0-1 --client-cpus "$CLIENT_CPU" "$@"; }
say "capacity, direct: one replica on CPUs 0-1, the clients on CPU $CLIENT_CPU"
load 2>&1 | tee "$OUT/load_direct.txt"
via_nginx() {   # $1: CPUs of the supervisor and nginx, $2: a name, $3: nginx's port
    taskset -c "$1" bash deploy/serve-class.sh --replicas 1 --port "$3" --cpus-per-replica 2 > "$OUT/serve-$2.log" 2>&1 &
    local pid=$!
    for _ in $(seq 240); do grep -q "^serving on" "$OUT/serve-$2.log" && break; sleep 0.5; done
    load --url "http://127.0.0.1:$3" 2>&1 | tee "$OUT/load_$2.txt"
    kill -INT "$pid"; wait "$pid"
}
say "capacity with heavy work (issue 38): $SESSIONS sessions, $REAL pressing Run together, $TRAIN pressing Train together"
timeout -s INT $((TRAIN_DURATION + 900)) "$py" bench/load_ws.py --sessions "$SESSIONS" --real "$REAL" --burst \
    --train "$TRAIN" --verify --timeout 900 --think 2 --duration "$TRAIN_DURATION" --ramp "$RAMP" --server-cpus 0-1 \
    --client-cpus "$CLIENT_CPU" 2>&1 | tee "$OUT/load_heavy.txt"
say "capacity through nginx on CPUs $NGINX_CPUS (the replica on 0-1)"
via_nginx "$NGINX_CPUS" nginx_own_cpus 8600
say "capacity through nginx on the replica's CPUs 0-1"
via_nginx 0-1 nginx_shared_cpus 8601
say "done"
