#!/usr/bin/env bash
# Route re-reads under churn. A replica on the Redis store caches ROUTES routes; then another client
# writes other fields of the hash, WRITES_PER_SECOND of them for CHURN_SECONDS, and each write makes
# the replica re-read every cached id. Meanwhile a fixed-rate load (wrk2) asks for one cached route.
# Reported per run: the writes made, the collector's pauses, the HMGETs the replica sent and
# Redis's time per call, the CPU of the replica and of Redis, and the load's latency. With
# --baseline, the two builds take turns, a fresh Redis and replica for each run.
#
#   bench/route-reread.sh [--no-build] [--baseline JAR] [--rounds N]
#
# Environment: ROUTES (100000), WRITES_PER_SECOND (10; 0 for none), CHURN_SECONDS (60),
# RATE (5000 req/s), WARMUP_SECONDS (15),
# SANDGATE_JAVA_OPTS (-Xms1g -Xmx1g; a collector can be chosen here), BENCH_WRK2 (wrk2's binary).
# Needs redis-server, redis-cli, nginx (the backend), wrk (to fill the cache), wrk2 and the JDK's jcmd.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
BUILD=1 BASELINE="" ROUNDS=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0 ;;
    --baseline) BASELINE="$(realpath "$2")"; shift ;;
    --rounds) ROUNDS="$2"; shift ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
  shift
done
: "${ROUTES:=100000}" "${WRITES_PER_SECOND:=10}" "${CHURN_SECONDS:=60}" "${RATE:=5000}" "${WARMUP_SECONDS:=15}"
: "${SANDGATE_JAVA_OPTS:=-Xms1g -Xmx1g}"
for n in ROUTES CHURN_SECONDS RATE WARMUP_SECONDS ROUNDS; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || { echo "$n=${!n}: a whole number above 0" >&2; exit 2; }
done
[[ "$WRITES_PER_SECOND" =~ ^[0-9]+$ ]] || { echo "WRITES_PER_SECOND=$WRITES_PER_SECOND: a whole number" >&2; exit 2; }
INTERVAL=$(awk -v w="$WRITES_PER_SECOND" 'BEGIN { if (w > 0) printf "%.4f", 1 / w }')   # seconds between writes
: "${BENCH_WRK2:=$(command -v wrk2 || true)}"
export PATH="$PATH:/usr/sbin"
for tool in redis-server redis-cli nginx wrk jcmd; do
  command -v "$tool" >/dev/null || { echo "$tool is needed" >&2; exit 2; }
done
[ -x "$BENCH_WRK2" ] || { echo "BENCH_WRK2 must name wrk2's binary (github.com/giltene/wrk2)" >&2; exit 2; }
[ -z "$BASELINE" ] || [ -f "$BASELINE" ] || { echo "--baseline $BASELINE: no such jar" >&2; exit 2; }
[ "$BUILD" -eq 0 ] || mvn -B -q package -DskipTests

RUN="$ROOT/bench/results/route-reread-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RUN"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  PIDS=()
}
trap 'cleanup; kill "${BACKEND_PID:-}" 2>/dev/null || true' EXIT
trap 'exit 130' INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
seconds() { awk -v t="$1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", t / hz }'; }   # clock ticks
wait_for() { for _ in $(seq 1 300); do curl -s -o /dev/null "$1" && return 0; sleep 0.2; done; echo "$1 did not answer; see $RUN" >&2; exit 1; }

# The backend: an nginx answering /1k from a file.
BACKEND_PORT=$(free_port)
mkdir -p "$RUN/backend/logs" "$RUN/backend/tmp" "$RUN/backend/www"
head -c 1024 /dev/zero | tr '\0' 'x' > "$RUN/backend/www/1k"
cat > "$RUN/backend/nginx.conf" <<CONF
worker_processes 1;
pid $RUN/backend/nginx.pid;
error_log $RUN/backend/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $RUN/backend/tmp/body;
    keepalive_requests 1000000;
    server { listen 127.0.0.1:$BACKEND_PORT backlog=4096; root $RUN/backend/www; default_type application/octet-stream; }
}
CONF
nginx -p "$RUN/backend" -c "$RUN/backend/nginx.conf" -e "$RUN/backend/logs/error.log" -g 'daemon off;' &
BACKEND_PID=$!
wait_for "http://127.0.0.1:$BACKEND_PORT/1k"

# one_run LABEL JAR ROUND: prints one table row
one_run() {
  local label="$1" jar="$2" dir="$RUN/$1-$3" redis_port gateway_port
  mkdir -p "$dir"
  redis_port=$(free_port) gateway_port=$(free_port)
  redis-server --port "$redis_port" --save '' --appendonly no > "$dir/redis.log" 2>&1 &
  local redis_pid=$!
  PIDS+=($redis_pid)
  until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done
  # ROUTES plain HSETs, written as the Redis protocol in one pipe
  awk -v n="$ROUTES" -v target="127.0.0.1:$BACKEND_PORT" 'BEGIN { for (i = 0; i < n; i++) { id = 1000000 + i;
      printf "*4\r\n$4\r\nHSET\r\n$13\r\nvnc_sandboxes\r\n$%d\r\n%d\r\n$%d\r\n%s\r\n", length(id ""), id, length(target), target } }' \
    | redis-cli -p "$redis_port" --pipe > "$dir/hset.log"
  SANDGATE_SERVER_HOST=127.0.0.1 SANDGATE_SERVER_PORT="$gateway_port" SANDGATE_LOG_ACCESS=false \
    SANDGATE_INGRESS_COOKIE_SECRET="bench-only-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')" \
    SANDGATE_CONFIG="$RUN/empty.yaml" SANDGATE_STORE_TYPE=redis SANDGATE_STORE_REDIS_ADDRESS="redis://127.0.0.1:$redis_port" \
    SANDGATE_INGRESS_ROUTE_CACHE_SIZE=$(( ROUTES * 2 )) \
    java $SANDGATE_JAVA_OPTS -Xlog:gc:file="$dir/gc.log" -jar "$jar" > "$dir/gateway.log" 2>&1 &
  local pid=$!
  PIDS+=($pid)
  wait_for "http://127.0.0.1:$gateway_port/healthz"
  local url="http://127.0.0.1:$gateway_port" cached=0
  for _ in $(seq 1 60); do
    ROUTES="$ROUTES" FILL_THREADS=2 wrk -t2 -c200 -d10s -s bench/route-fill.lua "$url" > /dev/null
    cached=$(curl -s "$url/metrics" | awk '/^sandgate_route_cache_size / { printf "%d", $2 }')
    [ "$cached" -lt "$ROUTES" ] || break
  done
  [ "$cached" -ge "$ROUTES" ] || { echo "only $cached of $ROUTES routes cached; see $dir" >&2; exit 1; }
  # A cache filled long ago sits in the old generation; without this the first young collections
  # measured would still be copying the routes just cached, in either build.
  jcmd "$pid" GC.run > /dev/null
  "$BENCH_WRK2" -t2 -c50 -d"${WARMUP_SECONDS}s" -R"$RATE" "$url/vnc/1000000/1k" > /dev/null
  local from churn cpu0 cpu1 redis0 redis1
  from=$(( $(wc -l < "$dir/gc.log") + 1 ))
  redis-cli -p "$redis_port" config resetstat > /dev/null
  # One redis-cli runs each line as it arrives, so the writer's rate is not capped by a process per write.
  ( for i in $(seq 1 $(( CHURN_SECONDS * WRITES_PER_SECOND ))); do
      echo "HSET vnc_sandboxes churn-$(( i % 50 )) 127.0.0.1:$(( 20000 + i % 2 ))"; sleep "$INTERVAL"; done \
    | redis-cli -p "$redis_port" > /dev/null ) &
  churn=$!
  cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat") redis0=$(awk '{ print $14 + $15 }' "/proc/$redis_pid/stat")
  "$BENCH_WRK2" -t2 -c50 -d"${CHURN_SECONDS}s" -R"$RATE" --latency "$url/vnc/1000000/1k" > "$dir/load.txt"
  cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat") redis1=$(awk '{ print $14 + $15 }' "/proc/$redis_pid/stat")
  wait "$churn"
  local stats writes hmgets pauses latency errors
  stats=$(redis-cli -p "$redis_port" info commandstats)
  # the writes made (the writer's HSETs), and the re-reads' HMGETs with Redis's own time per call
  writes=$(awk -F'[:,=]' '/^cmdstat_hset:/ { print $3 }' <<< "$stats")
  hmgets=$(awk -F'[:,=]' '/^cmdstat_hmget:/ { printf "%d | %.0f", $3, $7 }' <<< "$stats")
  pauses=$(tail -n +"$from" "$dir/gc.log" | awk '/Pause (Young|Full|Remark|Cleanup)/ { sub(/ms$/, "", $NF); n++; s += $NF; if ($NF + 0 > m + 0) m = $NF + 0 }
    END { printf "%d | %.0f | %.1f", n, s, m }')
  latency=$(awk '$1 ~ /^(50\.000|99\.000|99\.900|100\.000)%$/ { printf "%s | ", $2 }' "$dir/load.txt")
  errors=$(awk '/Non-2xx|Socket errors/ { print }' "$dir/load.txt" | tr '\n' ' ')
  printf '| %s | %s | %s | %s | %s | %s | %s | %s%s |\n' "$label" "$3" "${writes:-0}" "$pauses" "${hmgets:-0 | -}" \
    "$(seconds $(( cpu1 - cpu0 )))" "$(seconds $(( redis1 - redis0 )))" "$latency" "${errors:-none}"
  cleanup
}

echo "{}" > "$RUN/empty.yaml"
{
  echo "\`bench/route-reread.sh\` ($(date -u +%Y-%m-%dT%H:%MZ)): $ROUTES cached routes, $WRITES_PER_SECOND writes a second to other fields for ${CHURN_SECONDS} s, wrk2 at $RATE req/s on one cached route meanwhile; JVM options \`$SANDGATE_JAVA_OPTS\`"
  echo
  echo "| build | round | writes | collector pauses | paused ms | longest pause ms | HMGETs | Redis us per HMGET | replica CPU s | Redis CPU s | p50 | p99 | p99.9 | max | load errors |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
} | tee "$RUN/report.md"
for round in $(seq 1 "$ROUNDS"); do
  one_run this "$ROOT/target/sandgate.jar" "$round" | tee -a "$RUN/report.md"
  [ -z "$BASELINE" ] || one_run baseline "$BASELINE" "$round" | tee -a "$RUN/report.md"
done
echo "Report: $RUN/report.md"
