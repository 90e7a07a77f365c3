#!/usr/bin/env bash
# Serve Gated DeltaNet Explorer to a class: N app replicas on free local ports and nginx in front of them
# on 127.0.0.1:PORT, with cookie-based session affinity (deploy/nginx.conf). Runs in the foreground;
# Ctrl-C (or SIGTERM) stops nginx and every replica.
#
#     bash deploy/serve-class.sh --replicas 3 --port 8600 [--cpus-per-replica 2]
#
# --cpus-per-replica pins replica i to its own CPUs with taskset (replica 0 gets CPUs 0..k-1, ...).
set -euo pipefail
cd "$(dirname "$0")/.."

replicas=3
port=8600
cpus=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --replicas) replicas="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --cpus-per-replica) cpus="$2"; shift 2 ;;
    *) echo "usage: $0 [--replicas N] [--port P] [--cpus-per-replica K]" >&2; exit 2 ;;
  esac
done
py="${PYTHON:-$(command -v python || command -v python3)}"   # the interpreter that has the requirements
nginx_bin="$(command -v nginx || echo /usr/sbin/nginx)"
[[ -x "$nginx_bin" ]] || { echo "nginx is not installed (Debian: apt-get install nginx)" >&2; exit 1; }

run_dir="$(mktemp -d -t gdn-class.XXXXXX)"
mkdir -p "$run_dir"/{client_body,proxy,fastcgi,uwsgi,scgi}
chmod -R a+rwx "$run_dir"                              # started as root, nginx's workers run as nobody
pids=()
stop() {
  trap - INT TERM EXIT
  [[ -f "$run_dir/nginx.pid" ]] && kill "$(cat "$run_dir/nginx.pid")" 2>/dev/null || true
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$run_dir"
}
trap stop INT TERM EXIT

free_port() { "$py" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
upstreams=""
for ((i = 0; i < replicas; i++)); do
  p="$(free_port)"
  pin=()
  if [[ "$cpus" -gt 0 ]]; then pin=(taskset -c "$((i * cpus))-$((i * cpus + cpus - 1))"); fi
  "${pin[@]}" "$py" -m streamlit run app.py --server.address 127.0.0.1 --server.port "$p" \
      --server.headless true --browser.gatherUsageStats false > "$run_dir/replica-$i.log" 2>&1 &
  pids+=("$!")
  echo "replica $i: pid $! on 127.0.0.1:$p" >&2
  upstreams+="        server 127.0.0.1:$p max_fails=1 fail_timeout=5s;"$'\n'
done
for ((i = 0; i < replicas; i++)); do                  # wait until every replica answers its health check
  p="$(sed -n "$((i + 1))p" <<< "$upstreams" | grep -o '127.0.0.1:[0-9]*')"
  for _ in $(seq 120); do curl -sf "http://$p/_stcore/health" > /dev/null && break; sleep 0.5; done
done

"$py" - "$run_dir" "127.0.0.1:$port" "$upstreams" <<'PY'
import sys
from pathlib import Path
run_dir, listen, upstreams = sys.argv[1:]
conf = Path("deploy/nginx.conf").read_text()
conf = conf.replace("@PREFIX@", run_dir).replace("@LISTEN@", listen).replace("@UPSTREAMS@", upstreams.rstrip())
Path(run_dir, "nginx.conf").write_text(conf)
PY
echo "serving on http://127.0.0.1:$port ($replicas replicas; logs in $run_dir)" >&2
"$nginx_bin" -p "$run_dir" -e "$run_dir/error.log" -c "$run_dir/nginx.conf" -g "daemon off;" &
nginx_pid=$!
pids+=("$nginx_pid")
wait "$nginx_pid" || true          # a replica that dies is skipped by nginx; the class server ends with nginx
