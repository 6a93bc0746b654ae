#!/usr/bin/env bash
# Side-by-side benchmark: the same backend reached directly, through nginx, HAProxy, and Sandgate
# (memory and Redis stores), all on loopback. Builds the project, starts every process itself from
# configurations generated into bench/results/<run>/, runs the scenarios, and writes the section
# "Side by side: direct, nginx, HAProxy, Sandgate" of docs/BENCHMARKS.md. See bench/README.md.
#
#   bench/run.sh                 full run (about 30 minutes), updates docs/BENCHMARKS.md
#   bench/run.sh --quick         smoke run (seconds per scenario), report in the run directory only
#   options: --out FILE  --scenarios http_small_max,http_small_browser,http_small_rate,http_small_cpu,http_small_paired,http_large,ws_echo,ws_echo_paired,idle_ws,jmh,mcp,egress
#            --targets direct,nginx,haproxy,sandgate-memory,sandgate-redis  --no-build
#            optional targets: sandgate-servlet (ingress on the servlets, as in the WAR; memory store)
#            and sandgate-baseline (another build: --baseline JAR or BENCH_BASELINE_JAR=JAR; memory store)
#            and sandgate-baseline-servlet (that build with ingress on the servlets)
#            and sandgate-traced (memory store, OpenTelemetry on and every trace sampled, spans sent to
#            an OTLP sink in the backend process)
#            and nginx-headers (nginx adding what the gateway adds: X-Forwarded-*, Via, and the
#            gateway's Content-Security-Policy copied from its answer)
#            and jvm-relay (io.sandgate.bench.BareRelay: a plain NIO relay that does no HTTP work, the
#            floor for a proxy on the JVM; the 1 KB scenarios only)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$(pwd)"

ALL_SCENARIOS="http_small_max,http_small_browser,http_small_rate,http_small_cpu,http_small_paired,http_large,ws_echo,ws_echo_paired,idle_ws,jmh,mcp,egress"
ALL_TARGETS="direct,nginx,haproxy,sandgate-memory,sandgate-redis"
QUICK=0
BUILD=1
OUT=""
BENCH_BASELINE_JAR="${BENCH_BASELINE_JAR:-}"
SCENARIOS="$ALL_SCENARIOS"
TARGETS=""
COMMAND="bench/run.sh $*"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --no-build) BUILD=0 ;;
    --out) OUT="$2"; shift ;;
    --scenarios) SCENARIOS="$2"; shift ;;
    --targets) TARGETS="$2"; shift ;;
    --baseline) BENCH_BASELINE_JAR="$(realpath "$2")"; shift ;;
    *) echo "unknown option: $1 (see the header of $0)" >&2; exit 2 ;;
  esac
  shift
done
# Before and after in one run: the baseline is one more target, on the same machine at the same time.
[ -n "$TARGETS" ] || TARGETS="$ALL_TARGETS${BENCH_BASELINE_JAR:+,sandgate-baseline}"

# Durations and sizes; every one can be overridden from the environment.
if [ "$QUICK" -eq 1 ]; then
  : "${BENCH_SECONDS:=3}" "${BENCH_WARMUP_SECONDS:=1}" "${BENCH_IDLE_SESSIONS:=500}" "${BENCH_EGRESS_WORKFLOWS:=10}" "${BENCH_ROUNDS:=1}"
  : "${BENCH_JMH_ARGS:=-f 1 -wi 1 -w 1s -i 2 -r 1s}"
else
  # The JVMs need their JIT warm: on 2 cores Sandgate reaches its plateau after 30-60 s of load.
  : "${BENCH_SECONDS:=20}" "${BENCH_WARMUP_SECONDS:=30}" "${BENCH_IDLE_SESSIONS:=10000}" "${BENCH_EGRESS_WORKFLOWS:=60}"
  # Rounds of the 1 KB maximum, the targets taking turns in each: one pass per target moved a
  # target's ratio to nginx by 0.15 between runs minutes apart, as the machine's other load came and went.
  : "${BENCH_ROUNDS:=3}"
  : "${BENCH_JMH_ARGS:=-f 2 -wi 5 -w 1s -i 5 -r 1s}"
fi
: "${BENCH_CONNECTIONS:=50}"          # wrk connections, 1 KB scenarios
: "${BENCH_LARGE_CONNECTIONS:=8}"     # wrk connections, 1 MB scenario
: "${BENCH_WS_CONNECTIONS:=50}"       # WebSocket ping-pong connections
: "${BENCH_WS_MESSAGE_BYTES:=128}"
: "${BENCH_RATE:=}"                   # fixed rate; default: half of the slowest proxy's maximum under wrk
# wrk2 (github.com/giltene/wrk2, not packaged in Debian) for the fixed rate, if on the PATH or named
# here; without it, the JVM generator io.sandgate.bench.OpenLoopLoad.
: "${BENCH_WRK2:=$(command -v wrk2 || true)}"
WRK2="$BENCH_WRK2"
[ -z "$WRK2" ] || [ -x "$WRK2" ] || { echo "BENCH_WRK2=$WRK2 is not an executable" >&2; exit 2; }
: "${SANDGATE_JAVA_OPTS:=-Xms1g -Xmx1g}"
# Fixed heaps for the backend and the Java load generators too: left to size their own, G1 keeps
# them small and collects every second or so, and those pauses land in every row's tail.
: "${BENCH_BACKEND_JAVA_OPTS:=-Xms2g -Xmx2g}"
: "${BENCH_BACKEND:=java}"            # java, or nginx for the HTTP scenarios alone (see "the backend" below)
: "${BENCH_LOAD_JAVA_OPTS:=-Xms1g -Xmx1g}"
: "${BENCH_BASELINE_JAR:=}"           # the jar of the sandgate-baseline target
: "${BENCH_BASELINE_LABEL:=}"         # what the report calls it (a commit); the jar's path by default
case "$BENCH_BACKEND" in
  java) ;;
  nginx)
    # nginx serves files: no WebSocket echo, no OTLP sink for the traced target
    for s in ws_echo ws_echo_paired idle_ws sandgate-traced; do
      if [[ ",$SCENARIOS,$TARGETS," == *",$s,"* ]]; then echo "BENCH_BACKEND=nginx cannot serve $s; run it with the JVM backend" >&2; exit 2; fi
    done ;;
  *) echo "BENCH_BACKEND=$BENCH_BACKEND: java or nginx" >&2; exit 2 ;;
esac
# The bare relay frames a GET and an answer with a length, nothing else: no upgrades, and a large
# answer would be relayed by spinning on a full socket, which says nothing of a proxy's cost.
if [[ ",$TARGETS," == *",jvm-relay,"* ]]; then
  for s in http_large ws_echo ws_echo_paired idle_ws; do
    if [[ ",$SCENARIOS," == *",$s,"* ]]; then echo "the jvm-relay target serves the 1 KB scenarios only, not $s" >&2; exit 2; fi
  done
fi

need_apt=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need_apt+=(nginx)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || need_apt+=(haproxy)
command -v wrk >/dev/null 2>&1 || need_apt+=(wrk)
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "Installing: ${need_apt[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi
export PATH="$PATH:/usr/sbin"

RUN="$ROOT/bench/results/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$RUN"
RESULTS="$RUN/results.tsv"
: > "$RESULTS"
[ -n "$OUT" ] || { if [ "$QUICK" -eq 1 ]; then OUT="$RUN/BENCHMARKS.md"; cp docs/BENCHMARKS.md "$OUT"; else OUT="docs/BENCHMARKS.md"; fi; }
echo "Run directory: $RUN"

if [ "$BUILD" -eq 1 ]; then
  mvn -B -q package -DskipTests
fi
mvn -B -q dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile="$RUN/classpath.txt" >/dev/null
CP="$ROOT/target/test-classes:$ROOT/target/classes:$(cat "$RUN/classpath.txt")"

# 10 000 idle sessions need 10 000 sockets in the client and the backend, and twice that in the proxy.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
NOFILE="$(ulimit -n)"
max_idle=$(( (NOFILE - 1000) / 2 ))
if [ "$BENCH_IDLE_SESSIONS" -gt "$max_idle" ]; then
  echo "Open-file limit $NOFILE: idle sessions capped at $max_idle (asked: $BENCH_IDLE_SESSIONS)"
  BENCH_IDLE_SESSIONS=$max_idle
fi

PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM   # so that a signal, too, runs the cleanup

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >> "$RESULTS"; }
# field KEY LINE: the value of KEY=... in a RESULT line
field() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" <<< " $2"; }
# Rounds are kept as lines, one per round in order, each led by the figure that ranks it.
# median_line LINES ROUNDS: the median round's line
median_line() { sort -n <<< "${1%$'\n'}" | sed -n "$(( ($2 + 1) / 2 ))p"; }
# by_round LINES FORMAT: each round's leading figure, in round order, joined by ", "
by_round() { awk -v f="$2" '{printf "%s" f, (NR > 1 ? ", " : ""), $1}' <<< "${1%$'\n'}"; }
# The hypervisor's steal, in ticks of all cores together: time this guest's cores were ready to
# run but given to other guests. A pass with much of it measures the neighbours as well as the proxy.
steal_ticks() { awk '$1 == "cpu" {print $9}' /proc/stat; }
# steal_pct TICKS SECONDS: that steal as a percentage of all the cores' time over SECONDS
steal_pct() { awk -v t="$1" -v s="$2" -v hz="$(getconf CLK_TCK)" -v n="$(nproc)" 'BEGIN {printf "%.1f", 100 * t / (hz * n * s)}'; }
# error_sum LINES: the errors=N of every round, added up
error_sum() { grep -o 'errors=[0-9]*' <<< "$1" | awk -F= '{n += $2} END {print n + 0}'; }
wait_for() {
  local url="$1" what="$2"
  for _ in $(seq 1 300); do
    if curl -s -o /dev/null "$url"; then return 0; fi
    sleep 0.2
  done
  echo "$what did not come up; see $RUN/*.log" >&2
  exit 1
}

# nginx_head DIR: the lines an nginx.conf of its own in DIR starts with, before its http block
nginx_head() {
  cat <<CONF
worker_processes 2;
worker_rlimit_nofile $NOFILE;
pid $1/nginx.pid;
error_log $1/logs/error.log warn;
events { worker_connections $(( NOFILE - 100 )); }
CONF
}

# --- the backend -----------------------------------------------------------------------------
# BENCH_BACKEND=nginx answers /1k and /1m from files with an nginx of its own instead of the JVM
# backend, for the HTTP scenarios only: the JVM backend's own tail (a p99 of 16-18 ms at the fixed
# rate on 2 cores) is larger than the target it is the floor of.
BACKEND_PORT=$(free_port)
case "$BENCH_BACKEND" in
  java)
    java $BENCH_BACKEND_JAVA_OPTS -cp "$CP" io.sandgate.bench.BenchBackend "$BACKEND_PORT" > "$RUN/backend.log" 2>&1 &
    PIDS+=($!)
    BACKEND_PID=$!
    ;;
  nginx)
    dir="$RUN/backend"
    mkdir -p "$dir/logs" "$dir/tmp" "$dir/www"
    head -c 1024 /dev/zero | tr '\0' 'x' > "$dir/www/1k"
    head -c 1048576 /dev/zero | tr '\0' 'x' > "$dir/www/1m"
    cat > "$dir/nginx.conf" <<CONF
$(nginx_head "$dir")
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    keepalive_requests 1000000;
    server_tokens off;
    etag off;
    server {
        listen 127.0.0.1:$BACKEND_PORT backlog=4096;
        root $dir/www;
        default_type application/octet-stream;
    }
}
CONF
    nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" -g 'daemon off;' > "$RUN/backend.log" 2>&1 &
    PIDS+=($!)
    BACKEND_PID=$!
    ;;
esac
wait_for "http://127.0.0.1:$BACKEND_PORT/1k" backend
# The backend's processes, an nginx's workers with it
backend_pids() { echo "$BACKEND_PID $(pgrep -P "$BACKEND_PID" | tr '\n' ' ')"; }

# --- Redis -----------------------------------------------------------------------------------
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --dir "$RUN" > "$RUN/redis.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 50); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# --- nginx, as the reference design configures it -----------------------------------------------
# nginx_start NAME PORT [LOCATION LINES]: an nginx of its own in $RUN/NAME; sets LAST_PID
nginx_start() {
  local name="$1" port="$2" extra="${3:-}" dir="$RUN/$1"
  mkdir -p "$dir/logs" "$dir/tmp"
  cat > "$dir/nginx.conf" <<CONF
$(nginx_head "$dir")
http {
    access_log off;
    client_body_temp_path $dir/tmp/body;
    proxy_temp_path $dir/tmp/proxy;
    fastcgi_temp_path $dir/tmp/fastcgi;
    uwsgi_temp_path $dir/tmp/uwsgi;
    scgi_temp_path $dir/tmp/scgi;
    map \$http_upgrade \$connection_upgrade { default upgrade; '' ''; }
    upstream sandbox {
        server 127.0.0.1:$BACKEND_PORT;
        keepalive 64;
    }
    server {
        listen 127.0.0.1:$port backlog=4096;
        location / {
            proxy_pass http://sandbox;
            proxy_http_version 1.1;
            proxy_buffering off;
            proxy_set_header Host \$host;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_read_timeout 3600s;
            proxy_send_timeout 3600s;
$extra
        }
    }
}
CONF
  nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/logs/error.log" -g 'daemon off;' > "$RUN/$name.log" 2>&1 &
  PIDS+=($!)
  LAST_PID=$!
  wait_for "http://127.0.0.1:$port/1k" "$name"
}
NGINX_PORT=$(free_port)
nginx_start nginx "$NGINX_PORT"
NGINX_PID=$LAST_PID

# --- HAProxy, http mode with keep-alive on both sides --------------------------------------------
HAPROXY_PORT=$(free_port)
cat > "$RUN/haproxy.cfg" <<CONF
global
    maxconn $(( (NOFILE - 200) / 2 ))
    nbthread 2
defaults
    mode http
    option http-keep-alive
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h
frontend ingress
    bind 127.0.0.1:$HAPROXY_PORT
    default_backend sandbox
backend sandbox
    server backend 127.0.0.1:$BACKEND_PORT
CONF
haproxy -f "$RUN/haproxy.cfg" > "$RUN/haproxy.log" 2>&1 &
PIDS+=($!)
HAPROXY_PID=$!
wait_for "http://127.0.0.1:$HAPROXY_PORT/1k" HAProxy

# --- Sandgate: the route comes from static config (memory) or a plain HSET (Redis) ----------------
SANDBOX_ID=37579
SECRET="bench-only-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
start_sandgate() {
  local name="$1" port="$2" jar="$ROOT/target/sandgate.jar"; shift 2
  [[ "$name" != sandgate-baseline* ]] || jar="$BENCH_BASELINE_JAR"
  # Every load comes from 127.0.0.1: the per-client connection limit (1024 by default) would refuse
  # the idle sessions past it. Builds from before the limit refuse the variable, as any unknown one.
  [[ "$name" = sandgate-baseline* ]] || set -- SANDGATE_SERVER_MAX_CONNECTIONS_PER_CLIENT=$(( BENCH_IDLE_SESSIONS + 1000 )) "$@"
  # SANDGATE_JAVA_OPTS is this script's setting, not the gateway's: the gateway refuses unknown SANDGATE_ variables.
  env -u SANDGATE_JAVA_OPTS SANDGATE_SERVER_HOST=127.0.0.1 SANDGATE_SERVER_PORT="$port" SANDGATE_LOG_ACCESS=false \
      SANDGATE_INGRESS_COOKIE_SECRET="$SECRET" SANDGATE_CONFIG="$RUN/sandgate-empty.yaml" "$@" \
      java $SANDGATE_JAVA_OPTS -jar "$jar" > "$RUN/$name.log" 2>&1 &
  PIDS+=($!)
  LAST_PID=$!
  wait_for "http://127.0.0.1:$port/healthz" "$name"
}
# The cookie a browser gets from its first /vnc/{id}/ request; later requests carry only it.
session_cookie() {
  curl -s -o /dev/null -D - "http://127.0.0.1:$1/vnc/$SANDBOX_ID/1k" \
    | sed -n 's/^[Ss]et-[Cc]ookie: \(vnc_session_id=[^;]*\).*/\1/p' | tr -d '\r'
}
echo "{}" > "$RUN/sandgate-empty.yaml"
SG_MEMORY_PORT=$(free_port)
start_sandgate sandgate-memory "$SG_MEMORY_PORT" SANDGATE_INGRESS_STATIC_ROUTES="$SANDBOX_ID=127.0.0.1:$BACKEND_PORT"
SG_MEMORY_PID=$LAST_PID
SG_MEMORY_COOKIE=$(session_cookie "$SG_MEMORY_PORT")
redis-cli -p "$REDIS_PORT" HSET vnc_sandboxes "$SANDBOX_ID" "127.0.0.1:$BACKEND_PORT" >/dev/null
SG_REDIS_PORT=$(free_port)
start_sandgate sandgate-redis "$SG_REDIS_PORT" SANDGATE_STORE_TYPE=redis SANDGATE_STORE_REDIS_ADDRESS="redis://127.0.0.1:$REDIS_PORT"
SG_REDIS_PID=$LAST_PID
SG_REDIS_COOKIE=$(session_cookie "$SG_REDIS_PORT")
[ -n "$SG_MEMORY_COOKIE" ] && [ -n "$SG_REDIS_COOKIE" ] || { echo "Sandgate set no session cookie" >&2; exit 1; }
# Optional targets, started only when asked for: the servlet front-end of this build, and another build.
if [[ ",$TARGETS," == *",sandgate-servlet,"* ]]; then
  SG_SERVLET_PORT=$(free_port)
  start_sandgate sandgate-servlet "$SG_SERVLET_PORT" SANDGATE_INGRESS_STATIC_ROUTES="$SANDBOX_ID=127.0.0.1:$BACKEND_PORT" \
    SANDGATE_SERVER_INGRESS_FRONT_END=servlet
  SG_SERVLET_PID=$LAST_PID
  SG_SERVLET_COOKIE=$(session_cookie "$SG_SERVLET_PORT")
fi
if [[ ",$TARGETS," == *",sandgate-traced,"* ]]; then
  SG_TRACED_PORT=$(free_port)
  start_sandgate sandgate-traced "$SG_TRACED_PORT" SANDGATE_INGRESS_STATIC_ROUTES="$SANDBOX_ID=127.0.0.1:$BACKEND_PORT" \
    SANDGATE_TRACING_OTLP_ENDPOINT="http://127.0.0.1:$BACKEND_PORT" SANDGATE_TRACING_SAMPLE_RATIO=1.0
  SG_TRACED_PID=$LAST_PID
  SG_TRACED_COOKIE=$(session_cookie "$SG_TRACED_PORT")
fi
if [[ ",$TARGETS," == *",sandgate-baseline,"* ]]; then
  [ -f "$BENCH_BASELINE_JAR" ] || { echo "sandgate-baseline needs BENCH_BASELINE_JAR=path/to/sandgate.jar" >&2; exit 2; }
  SG_BASELINE_PORT=$(free_port)
  start_sandgate sandgate-baseline "$SG_BASELINE_PORT" SANDGATE_INGRESS_STATIC_ROUTES="$SANDBOX_ID=127.0.0.1:$BACKEND_PORT"
  SG_BASELINE_PID=$LAST_PID
  SG_BASELINE_COOKIE=$(session_cookie "$SG_BASELINE_PORT")
  record meta - baseline "${BENCH_BASELINE_LABEL:-$BENCH_BASELINE_JAR}"
fi
if [[ ",$TARGETS," == *",sandgate-baseline-servlet,"* ]]; then
  [ -f "$BENCH_BASELINE_JAR" ] || { echo "sandgate-baseline-servlet needs BENCH_BASELINE_JAR=path/to/sandgate.jar" >&2; exit 2; }
  SG_BASELINE_SERVLET_PORT=$(free_port)
  start_sandgate sandgate-baseline-servlet "$SG_BASELINE_SERVLET_PORT" SANDGATE_INGRESS_STATIC_ROUTES="$SANDBOX_ID=127.0.0.1:$BACKEND_PORT" \
    SANDGATE_SERVER_INGRESS_FRONT_END=servlet
  SG_BASELINE_SERVLET_PID=$LAST_PID
  SG_BASELINE_SERVLET_COOKIE=$(session_cookie "$SG_BASELINE_SERVLET_PORT")
  record meta - baseline "${BENCH_BASELINE_LABEL:-$BENCH_BASELINE_JAR}"
fi

# nginx doing the header work the gateway does by design: the forwarding fields towards the
# sandbox, and on every answer the gateway's own confinement policy, copied from its answer, so
# that the heads both ways are as long as behind the gateway.
if [[ ",$TARGETS," == *",nginx-headers,"* ]]; then
  POLICY=$(curl -s -o /dev/null -D - -H "Cookie: $SG_MEMORY_COOKIE" "http://127.0.0.1:$SG_MEMORY_PORT/vnc/1k" \
    | sed -n 's/^[Cc]ontent-[Ss]ecurity-[Pp]olicy: //p' | tr -d '\r')
  # Pasted into nginx.conf inside double quotes, where a quote would end it and a $ name a variable.
  [ -n "$POLICY" ] && [[ "$POLICY" != *[\"\$]* ]] \
    || { echo "nginx-headers: Sandgate's Content-Security-Policy is missing or holds a quote or a \$: '$POLICY'" >&2; exit 1; }
  NGINX_HEADERS_PORT=$(free_port)
  nginx_start nginx-headers "$NGINX_HEADERS_PORT" "            proxy_set_header Via \"1.1 \$hostname\";
            proxy_set_header X-Forwarded-For \$remote_addr;
            proxy_set_header X-Forwarded-Proto \$scheme;
            proxy_set_header X-Forwarded-Host \$http_host;
            proxy_set_header X-Forwarded-Prefix /vnc;
            add_header Content-Security-Policy \"$POLICY\" always;"
  NGINX_HEADERS_PID=$LAST_PID
fi

if [[ ",$TARGETS," == *",jvm-relay,"* ]]; then
  JVM_RELAY_PORT=$(free_port)
  java $SANDGATE_JAVA_OPTS -cp "$CP" io.sandgate.bench.BareRelay "$JVM_RELAY_PORT" 127.0.0.1 "$BACKEND_PORT" > "$RUN/jvm-relay.log" 2>&1 &
  PIDS+=($!)
  JVM_RELAY_PID=$!
  wait_for "http://127.0.0.1:$JVM_RELAY_PORT/1k" jvm-relay
fi

# http_url TARGET PATH / ws_url TARGET / cookie TARGET / pids TARGET
http_url() {
  case "$1" in
    direct) echo "http://127.0.0.1:$BACKEND_PORT$2" ;;
    nginx) echo "http://127.0.0.1:$NGINX_PORT$2" ;;
    nginx-headers) echo "http://127.0.0.1:$NGINX_HEADERS_PORT$2" ;;
    haproxy) echo "http://127.0.0.1:$HAPROXY_PORT$2" ;;
    jvm-relay) echo "http://127.0.0.1:$JVM_RELAY_PORT$2" ;;
    sandgate-memory) echo "http://127.0.0.1:$SG_MEMORY_PORT/vnc$2" ;;
    sandgate-redis) echo "http://127.0.0.1:$SG_REDIS_PORT/vnc$2" ;;
    sandgate-servlet) echo "http://127.0.0.1:$SG_SERVLET_PORT/vnc$2" ;;
    sandgate-baseline) echo "http://127.0.0.1:$SG_BASELINE_PORT/vnc$2" ;;
    sandgate-baseline-servlet) echo "http://127.0.0.1:$SG_BASELINE_SERVLET_PORT/vnc$2" ;;
    sandgate-traced) echo "http://127.0.0.1:$SG_TRACED_PORT/vnc$2" ;;
  esac
}
ws_url() { http_url "$1" /ws | sed 's/^http/ws/'; }
cookie() {
  case "$1" in
    sandgate-memory) echo "$SG_MEMORY_COOKIE" ;;
    sandgate-redis) echo "$SG_REDIS_COOKIE" ;;
    sandgate-servlet) echo "$SG_SERVLET_COOKIE" ;;
    sandgate-baseline) echo "$SG_BASELINE_COOKIE" ;;
    sandgate-baseline-servlet) echo "$SG_BASELINE_SERVLET_COOKIE" ;;
    sandgate-traced) echo "$SG_TRACED_COOKIE" ;;
    *) echo "" ;;
  esac
}
pids() {
  case "$1" in
    direct) echo "" ;;
    nginx) echo "$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')" ;;
    nginx-headers) echo "$NGINX_HEADERS_PID $(pgrep -P "$NGINX_HEADERS_PID" | tr '\n' ' ')" ;;
    haproxy) echo "$HAPROXY_PID" ;;
    jvm-relay) echo "$JVM_RELAY_PID" ;;
    sandgate-memory) echo "$SG_MEMORY_PID" ;;
    sandgate-redis) echo "$SG_REDIS_PID" ;;
    sandgate-servlet) echo "$SG_SERVLET_PID" ;;
    sandgate-baseline) echo "$SG_BASELINE_PID" ;;
    sandgate-baseline-servlet) echo "$SG_BASELINE_SERVLET_PID" ;;
    sandgate-traced) echo "$SG_TRACED_PID" ;;
  esac
}
# cpu_ticks PIDS [user]: utime+stime of the processes, or with "user" utime alone (the rest being
# the kernel's work on their behalf)
cpu_ticks() {
  local total=0 pid
  for pid in $1; do
    total=$(( total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk -v user="${2:-}" '{print user ? $12 : $12 + $13}') ))
  done
  echo "$total"
}
pin() { local pid; for pid in $2; do taskset -a -p -c "$1" "$pid" > /dev/null; done; }  # pin CORES PIDS
rss_kb() {
  local total=0 pid
  for pid in $1; do
    total=$(( total + $(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status") ))
  done
  echo "$total"
}
heap_used_kb() {
  jcmd "$1" GC.run >/dev/null
  jcmd "$1" GC.heap_info | sed -n 's/.*used \([0-9]*\)K.*/\1/p' | head -1
}
run_wrk() {  # run_wrk TARGET CONNECTIONS SECONDS PATH [WRK ARGS] -> RESULT line
  local target="$1" c="$2" d="$3" path="$4" ck
  shift 4
  ck=$(cookie "$target")
  wrk -t2 -c"$c" -d"${d}s" -s "$ROOT/bench/wrk-report.lua" ${ck:+-H "Cookie: $ck"} "$@" "$(http_url "$target" "$path")" | grep '^RESULT'
}
# extra_headers SCENARIO TARGET -> sets EXTRA, wrk's -H arguments beyond the cookie: none for
# http_small_max; for http_small_browser, what Chromium 131 sends for a script of a page it shows,
# with the Referer naming that page under the target (for Sandgate, the sandbox's own path: the
# Referer is then how the sandbox is found, ahead of the cookie). wrk's own request has two lines,
# Host and the cookie; a browser's has fourteen, some 600 bytes, and every proxy pays for each byte
# of them twice, reading and writing.
extra_headers() {
  EXTRA=()
  [ "$1" = http_small_browser ] || return 0
  EXTRA=(-H "Connection: keep-alive" -H 'sec-ch-ua: "Chromium";v="131", "Not_A Brand";v="24"' -H "sec-ch-ua-mobile: ?0"
    -H "User-Agent: Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
    -H 'sec-ch-ua-platform: "Linux"' -H "Accept: */*" -H "Sec-Fetch-Site: same-origin" -H "Sec-Fetch-Mode: no-cors"
    -H "Sec-Fetch-Dest: script" -H "Referer: $(http_url "$2" "/$SANDBOX_ID/vnc.html")"
    -H "Accept-Encoding: gzip, deflate, br, zstd" -H "Accept-Language: en-US,en;q=0.9")
}
has() { [[ ",$1," == *",$2,"* ]]; }
targets() { tr ',' ' ' <<< "$TARGETS"; }

# --- the machine and the commands, for the report -------------------------------------------------
record meta - command "$COMMAND"
record meta - date "$(date -u +%Y-%m-%dT%H:%MZ)"
record meta - cores "$(nproc)"
record meta - cpu "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
record meta - ram "$(awk '/^MemTotal:/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
record meta - kernel "Linux $(uname -r)"
record meta - java "$(java -version 2>&1 | head -1 | sed 's/.*"\(.*\)".*/\1/')"
record meta - nginx "$(nginx -v 2>&1 | sed 's/.*nginx\///')"
record meta - haproxy "$(haproxy -v | head -1 | awk '{print $3}')"
record meta - wrk "$(wrk -v 2>&1 | head -1 | awk '{print $2}')"
record meta - redis "$(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
record meta - sandgate_java_opts "$SANDGATE_JAVA_OPTS"
record meta - backend "$([ "$BENCH_BACKEND" = nginx ] && echo "an nginx serving /1k and /1m from files" || echo "the JVM backend (io.sandgate.bench.BenchBackend)")"
record meta - cmd_http_small_max "wrk -t2 -c$BENCH_CONNECTIONS -d${BENCH_SECONDS}s -s bench/wrk-report.lua URL/1k, after ${BENCH_WARMUP_SECONDS}s of warm-up, $BENCH_ROUNDS rounds"
record meta - cmd_http_small_browser "wrk -t2 -c$BENCH_CONNECTIONS -d${BENCH_SECONDS}s -s bench/wrk-report.lua -H ... URL/1k with the twelve more header lines of a browser's request for a script (bench/run.sh, extra_headers), after ${BENCH_WARMUP_SECONDS}s of warm-up, $BENCH_ROUNDS rounds"
record meta - cmd_http_large "wrk -t2 -c$BENCH_LARGE_CONNECTIONS -d${BENCH_SECONDS}s -s bench/wrk-report.lua URL/1m, after ${BENCH_WARMUP_SECONDS}s of warm-up, $BENCH_ROUNDS rounds"
record meta - cmd_ws_echo "WebSocketLoad echo URL/ws $BENCH_WS_CONNECTIONS connections ${BENCH_SECONDS}s ${BENCH_WS_MESSAGE_BYTES}-byte messages, after ${BENCH_WARMUP_SECONDS}s of warm-up, $BENCH_ROUNDS rounds"
record meta - cmd_idle_ws "WebSocketLoad idle URL/ws $BENCH_IDLE_SESSIONS sessions"
record meta - cmd_jmh "org.openjdk.jmh.Main RouteLookupBenchmark $BENCH_JMH_ARGS -p store=memory,redis"

# --- scenarios ------------------------------------------------------------------------------------
# max_scenario NAME: the 1 KB maximum, the targets taking turns in each round; http_small_browser
# sends a browser's header lines besides the cookie.
max_scenario() {
  local scenario="$1" t round stolen line rps median
  for t in $(targets); do
    extra_headers "$scenario" "$t"
    run_wrk "$t" "$BENCH_CONNECTIONS" "$BENCH_WARMUP_SECONDS" /1k "${EXTRA[@]}" > /dev/null
  done
  declare -A max_lines=() max_steal=()
  for round in $(seq 1 "$BENCH_ROUNDS"); do
    for t in $(targets); do
      extra_headers "$scenario" "$t"
      stolen=$(steal_ticks)
      line=$(run_wrk "$t" "$BENCH_CONNECTIONS" "$BENCH_SECONDS" /1k "${EXTRA[@]}")
      stolen=$(steal_pct $(( $(steal_ticks) - stolen )) "$BENCH_SECONDS")
      echo "$scenario $t round $round: steal ${stolen}% $line"
      rps=$(awk -v r="$(field requests "$line")" -v us="$(field duration_us "$line")" 'BEGIN {printf "%.1f", r / (us / 1e6)}')
      max_lines[$t]+="$rps $line"$'\n'
      max_steal[$t]+="${max_steal[$t]:+, }$stolen"
    done
  done
  # Each target's median round by req/s stands for it; every round's req/s is kept beside it, and
  # the errors are every round's, so that a round with errors is not hidden behind the median.
  for t in $(targets); do
    median=$(median_line "${max_lines[$t]}" "$BENCH_ROUNDS")
    record "$scenario" "$t" rps "${median%% *}"
    for m in p50_ms p99_ms; do record "$scenario" "$t" "$m" "$(field "$m" "${median#* }")"; done
    record "$scenario" "$t" errors "$(error_sum "${max_lines[$t]}")"
    record "$scenario" "$t" rounds "$(by_round "${max_lines[$t]}" %.0f)"
    record "$scenario" "$t" steal "${max_steal[$t]}"
  done
}
for scenario in http_small_max http_small_browser; do
  if has "$SCENARIOS" "$scenario"; then max_scenario "$scenario"; fi
done

if has "$SCENARIOS" http_small_rate; then
  rate="$BENCH_RATE"
  basis="set by BENCH_RATE"
  if [ -z "$rate" ]; then
    # Half of the slowest proxy's maximum under wrk, so that the latencies are compared at one
    # rate. With the JVM generator, which costs more per request than wrk and shares the cores
    # with the proxies, a proxy may be more than half loaded at that rate (the report flags a row
    # that fell behind).
    rate=$(awk -F'\t' '$1 == "http_small_max" && $2 != "direct" && $3 == "rps" && (min == "" || $4 < min) {min = $4} END {if (min != "") printf "%.0f", min / 2}' "$RESULTS")
    basis="half of the slowest proxy's maximum above, under wrk"
    [ -n "$WRK2" ] || basis+=" (this generator costs more per request than wrk, and shares the cores)"
  fi
  [ -n "$rate" ] || { rate=2000; basis="the default, no maximum having been measured"; }
  record meta - rate "$rate"
  record meta - rate_basis "$basis"
  hz=$(getconf CLK_TCK)
  # One pass of target $1 recording $2 seconds: "p99-ms cpu-seconds RESULT-line". The proxy's CPU
  # counts from the end of the generator's unrecorded lead (wrk2's calibration, or the JVM
  # generator's warm-up) to the end: what a request costs when requests come one at a time
  # rather than back to back.
  rate_pass() {
    local p="" ck lead load before after stolen line out="$RUN/rate-$1.out"
    [ "$1" = direct ] || p=$(pids "$1")
    ck=$(cookie "$1")
    if [ -n "$WRK2" ]; then
      lead=10   # wrk2 calibrates for its first 10 s and records nothing of them
      "$WRK2" -t2 -c"$BENCH_CONNECTIONS" -d"$(( $2 + lead ))s" -R"$rate" -s "$ROOT/bench/wrk-report.lua" ${ck:+-H "Cookie: $ck"} "$(http_url "$1" /1k)" > "$out" &
    else
      lead=$BENCH_WARMUP_SECONDS
      java $BENCH_LOAD_JAVA_OPTS -cp "$CP" io.sandgate.bench.OpenLoopLoad "$(http_url "$1" /1k)" "$rate" "$2" "$lead" "$BENCH_CONNECTIONS" "$ck" > "$out" &
    fi
    load=$!
    PIDS+=("$load")   # stopped with the rest if the run is interrupted
    sleep "$lead"
    before=$(cpu_ticks "$p")
    stolen=$(steal_ticks)
    wait "$load" || true
    after=$(cpu_ticks "$p")
    stolen=$(steal_pct $(( $(steal_ticks) - stolen )) "$2")
    line="$(grep '^RESULT' "$out") steal_pct=$stolen"
    echo "$(field p99_ms "$line") $(awk -v d=$(( after - before )) -v hz="$hz" 'BEGIN {print d / hz}') $line"
  }
  if [ -n "$WRK2" ]; then
    # A C generator leaves the cores to the proxies: rounds, the targets taking turns, after an
    # unrecorded pass each for the JIT.
    rate_rounds=$BENCH_ROUNDS
    record meta - cmd_http_small_rate "wrk2 -t2 -c$BENCH_CONNECTIONS -d$(( BENCH_SECONDS + 10 ))s -R$rate URL/1k (its first 10 s calibration, unrecorded), after ${BENCH_WARMUP_SECONDS}s of warm-up, $rate_rounds rounds"
    for t in $(targets); do rate_pass "$t" "$(( BENCH_WARMUP_SECONDS > 10 ? BENCH_WARMUP_SECONDS - 10 : 1 ))" > /dev/null; done
  else
    # The JVM generator warms itself and the proxy up in each pass: one pass per target.
    rate_rounds=1
    record meta - cmd_http_small_rate "OpenLoopLoad URL/1k $rate req/s for ${BENCH_SECONDS}s (after ${BENCH_WARMUP_SECONDS}s unrecorded) over $BENCH_CONNECTIONS connections"
  fi
  declare -A rate_lines=() rate_steal=()
  for round in $(seq 1 "$rate_rounds"); do
    for t in $(targets); do
      line=$(rate_pass "$t" "$BENCH_SECONDS")
      echo "http_small_rate $t round $round: $line"
      rate_lines[$t]+="$line"$'\n'
      rate_steal[$t]+="${rate_steal[$t]:+, }$(field steal_pct "$line")"
    done
  done
  # Each target's median round by p99 stands for it, with the errors of every round; every
  # round's p99 is kept beside it, to be read against the same round's direct row.
  for t in $(targets); do
    median=$(median_line "${rate_lines[$t]}" "$rate_rounds")
    read -r _ cpu_s line <<< "$median"
    for m in p50_ms p99_ms p999_ms; do record http_small_rate "$t" "$m" "$(field "$m" "$line")"; done
    record http_small_rate "$t" errors "$(error_sum "${rate_lines[$t]}")"
    record http_small_rate "$t" rounds "$(by_round "${rate_lines[$t]}" %s)"
    record http_small_rate "$t" steal "${rate_steal[$t]}"
    if [ "$t" != direct ]; then
      record http_small_rate "$t" cpu_s "$cpu_s"
      record http_small_rate "$t" due "$(awk -v r="$rate" -v s="$BENCH_SECONDS" 'BEGIN {printf "%.0f", r * s}')"
    fi
  done
fi

if has "$SCENARIOS" http_small_cpu; then
  # CPU per request, the proxy alone on core 0, wrk and the backend on the last core, so that the
  # proxy's CPU time is not its share of a contended core. Affinity is restored afterwards. In
  # rounds, the targets taking turns, as the maximum above: one pass per target did not rank two
  # builds 6 % apart that alternated pairs did, the machine's speed moving by more between passes.
  hz=$(getconf CLK_TCK)
  last=$(( $(nproc) - 1 ))
  record meta - cmd_http_small_cpu "taskset -c $last wrk -t1 -c$BENCH_CONNECTIONS -d${BENCH_SECONDS}s URL/1k, proxy pinned to core 0 (taskset -a -p -c 0), backend to core $last, after ${BENCH_WARMUP_SECONDS}s of warm-up, $BENCH_ROUNDS rounds"
  # One measured pass of target $1: "CPU-us-per-request requests cpu-seconds user-seconds steal-%".
  pinned_pass() {
    local p ck before after user_before user_after stolen line
    p=$(pids "$1")
    pin 0 "$p"
    ck=$(cookie "$1")
    before=$(cpu_ticks "$p"); user_before=$(cpu_ticks "$p" user); stolen=$(steal_ticks)
    line=$(taskset -c "$last" wrk -t1 -c"$BENCH_CONNECTIONS" -d"${2}s" -s "$ROOT/bench/wrk-report.lua" ${ck:+-H "Cookie: $ck"} "$(http_url "$1" /1k)" | grep '^RESULT')
    after=$(cpu_ticks "$p"); user_after=$(cpu_ticks "$p" user); stolen=$(steal_pct $(( $(steal_ticks) - stolen )) "$2")
    pin "0-$last" "$p"
    awk -v r="$(field requests "$line")" -v d=$(( after - before )) -v u=$(( user_after - user_before )) -v hz="$hz" -v st="$stolen" \
      'BEGIN {printf "%.1f %d %s %s %s\n", r ? d / hz / r * 1e6 : 0, r, d / hz, u / hz, st}'
  }
  pin "$last" "$(backend_pids)"
  declare -A cpu_lines=()
  for t in $(targets); do
    [ "$t" = direct ] || pinned_pass "$t" "$BENCH_WARMUP_SECONDS" > /dev/null
  done
  for round in $(seq 1 "$BENCH_ROUNDS"); do
    for t in $(targets); do
      [ "$t" != direct ] || continue
      line=$(pinned_pass "$t" "$BENCH_SECONDS")
      echo "http_small_cpu $t round $round: $line"
      cpu_lines[$t]+="$line"$'\n'
    done
  done
  pin "0-$last" "$(backend_pids)"
  # Each target's median round by CPU per request stands for it; every round's figure is kept beside it.
  for t in $(targets); do
    [ "$t" != direct ] || continue
    median=$(median_line "${cpu_lines[$t]}" "$BENCH_ROUNDS")
    read -r _ requests cpu_s user_s _ <<< "$median"
    record http_small_cpu "$t" requests "$requests"
    record http_small_cpu "$t" cpu_s "$cpu_s"
    record http_small_cpu "$t" user_s "$user_s"
    record http_small_cpu "$t" rounds "$(by_round "${cpu_lines[$t]}" %s)"
    record http_small_cpu "$t" steal "$(awk '{printf "%s%s", (NR > 1 ? ", " : ""), $5}' <<< "${cpu_lines[$t]%$'\n'}")"
  done
fi

# Each build of this run beside the baseline build, at the same time: both pinned to core 0, each
# loaded by its own client from the last core. Two builds measured in turns see different minutes of
# a machine whose speed moves by more than a change is worth; measured at once, they share them.
# http_small_paired loads each with wrk on /1k, ws_echo_paired with the WebSocket echo (half the
# connections each, so that the two add up to the side-by-side echo's).
hz=$(getconf CLK_TCK)
last=$(( $(nproc) - 1 ))
# Scenario $1's load on target $2 for $3 seconds, from the last core: its RESULT line.
paired_load() {
  case "$1" in
    http_small_paired) taskset -c "$last" wrk -t1 -c"$BENCH_CONNECTIONS" -d"${3}s" -s "$ROOT/bench/wrk-report.lua" \
      -H "Cookie: $(cookie "$2")" "$(http_url "$2" /1k)" | grep '^RESULT' ;;
    ws_echo_paired) taskset -c "$last" java $BENCH_LOAD_JAVA_OPTS -cp "$CP" io.sandgate.bench.WebSocketLoad echo "$(ws_url "$2")" \
      $(( (BENCH_WS_CONNECTIONS + 1) / 2 )) "$3" "$BENCH_WS_MESSAGE_BYTES" "$(cookie "$2")" | grep '^RESULT' ;;
  esac
}
# One measured pass of scenario $1 on targets $2 and $3 at once, $4 seconds: "CPU-us-per-unit-1 CPU-us-per-unit-2",
# a unit being a request or an echoed message.
paired_pass() {
  local p1 p2 b1 b2 l1 l2 unit out1="$RUN/paired-1.out"
  [ "$1" = ws_echo_paired ] && unit=messages || unit=requests
  p1=$(pids "$2"); p2=$(pids "$3")
  b1=$(cpu_ticks "$p1"); b2=$(cpu_ticks "$p2")
  paired_load "$1" "$2" "$4" > "$out1" &
  l2=$(paired_load "$1" "$3" "$4")
  wait $!
  l1=$(cat "$out1")
  awk -v r1="$(field "$unit" "$l1")" -v d1=$(( $(cpu_ticks "$p1") - b1 )) -v r2="$(field "$unit" "$l2")" -v d2=$(( $(cpu_ticks "$p2") - b2 )) -v hz="$hz" \
    'BEGIN {printf "%.1f %.1f\n", r1 ? d1 / hz / r1 * 1e6 : 0, r2 ? d2 / hz / r2 * 1e6 : 0}'
}
record meta - cmd_http_small_paired "taskset -c $last wrk -t1 -c$BENCH_CONNECTIONS -d${BENCH_SECONDS}s URL/1k against each of two gateways at once, both pinned to core 0, backend to core $last, after ${BENCH_WARMUP_SECONDS}s of warm-up, $BENCH_ROUNDS rounds"
record meta - cmd_ws_echo_paired "taskset -c $last WebSocketLoad echo URL/ws $(( (BENCH_WS_CONNECTIONS + 1) / 2 )) connections ${BENCH_SECONDS}s ${BENCH_WS_MESSAGE_BYTES}-byte messages against each of two gateways at once, both pinned to core 0, backend to core $last, after ${BENCH_WARMUP_SECONDS}s of warm-up, $BENCH_ROUNDS rounds"
for scenario in http_small_paired ws_echo_paired; do
  has "$SCENARIOS" "$scenario" || continue
  if ! has "$TARGETS" sandgate-baseline; then
    echo "$scenario needs the sandgate-baseline target (--baseline JAR); skipped" >&2
    continue
  fi
  pin "$last" "$(backend_pids)"
  for t in $(targets); do
    case "$t" in sandgate-baseline*) continue ;; sandgate-*) ;; *) continue ;; esac
    pin 0 "$(pids "$t") $SG_BASELINE_PID"
    paired_pass "$scenario" "$t" sandgate-baseline "$BENCH_WARMUP_SECONDS" > /dev/null
    lines=""
    for round in $(seq 1 "$BENCH_ROUNDS"); do
      line=$(paired_pass "$scenario" "$t" sandgate-baseline "$BENCH_SECONDS")
      echo "$scenario $t round $round (CPU us per unit, this build and the baseline): $line"
      lines+="$(awk '{printf "%.3f %s %s", $2 ? $1 / $2 : 0, $1, $2}' <<< "$line")"$'\n'
    done
    pin "0-$last" "$(pids "$t") $SG_BASELINE_PID"
    # The median round by ratio stands for the pair; every round's ratio is kept beside it.
    read -r ratio cpu_us base_us <<< "$(median_line "$lines" "$BENCH_ROUNDS")"
    record "$scenario" "$t" ratio "$ratio"
    record "$scenario" "$t" cpu_us "$cpu_us"
    record "$scenario" "$t" baseline_cpu_us "$base_us"
    record "$scenario" "$t" rounds "$(by_round "$lines" %.2f)"
  done
  pin "0-$last" "$(backend_pids)"
done

if has "$SCENARIOS" http_large; then
  hz=$(getconf CLK_TCK)
  for t in $(targets); do
    run_wrk "$t" "$BENCH_LARGE_CONNECTIONS" "$BENCH_WARMUP_SECONDS" /1m > /dev/null
  done
  # In rounds, the targets taking turns, as the 1 KB maximum; each line "MB/s bytes seconds cpu-seconds".
  declare -A large_lines=() large_steal=()
  for round in $(seq 1 "$BENCH_ROUNDS"); do
    for t in $(targets); do
      p=$(pids "$t")
      before=$(cpu_ticks "$p"); stolen=$(steal_ticks)
      line=$(run_wrk "$t" "$BENCH_LARGE_CONNECTIONS" "$BENCH_SECONDS" /1m)
      after=$(cpu_ticks "$p"); stolen=$(steal_pct $(( $(steal_ticks) - stolen )) "$BENCH_SECONDS")
      echo "http_large $t round $round: steal ${stolen}% $line"
      large_steal[$t]+="${large_steal[$t]:+, }$stolen"
      large_lines[$t]+="$(awk -v b="$(field bytes "$line")" -v us="$(field duration_us "$line")" -v d=$(( after - before )) -v hz="$hz" \
        'BEGIN {printf "%.1f %s %s %s\n", us ? b / 1e6 / (us / 1e6) : 0, b, us / 1e6, d / hz}')"$'\n'
    done
  done
  # Each target's median round by MB/s stands for it; every round's MB/s is kept beside it.
  for t in $(targets); do
    read -r _ bytes seconds cpu_s <<< "$(median_line "${large_lines[$t]}" "$BENCH_ROUNDS")"
    record http_large "$t" bytes "$bytes"
    record http_large "$t" seconds "$seconds"
    [ "$t" = direct ] || record http_large "$t" cpu_s "$cpu_s"
    record http_large "$t" rounds "$(by_round "${large_lines[$t]}" %.0f)"
    record http_large "$t" steal "${large_steal[$t]}"
  done
fi

if has "$SCENARIOS" ws_echo; then
  # In rounds, the targets taking turns, as the HTTP maximum: one pass per target put the gateway
  # at 0.85x nginx in a run where alternated passes in the same hour gave 1.1x.
  for t in $(targets); do
    # Unrecorded first, as for HTTP: the JVMs' WebSocket paths are cold until now.
    java $BENCH_LOAD_JAVA_OPTS -cp "$CP" io.sandgate.bench.WebSocketLoad echo "$(ws_url "$t")" "$BENCH_WS_CONNECTIONS" "$BENCH_WARMUP_SECONDS" "$BENCH_WS_MESSAGE_BYTES" "$(cookie "$t")" > /dev/null
  done
  hz=$(getconf CLK_TCK)
  declare -A ws_lines=() ws_steal=()
  for round in $(seq 1 "$BENCH_ROUNDS"); do
    for t in $(targets); do
      p=""
      [ "$t" = direct ] || p=$(pids "$t")
      before=$(cpu_ticks "$p"); stolen=$(steal_ticks)
      line=$(java $BENCH_LOAD_JAVA_OPTS -cp "$CP" io.sandgate.bench.WebSocketLoad echo "$(ws_url "$t")" "$BENCH_WS_CONNECTIONS" "$BENCH_SECONDS" "$BENCH_WS_MESSAGE_BYTES" "$(cookie "$t")" | grep '^RESULT')
      after=$(cpu_ticks "$p"); stolen=$(steal_pct $(( $(steal_ticks) - stolen )) "$BENCH_SECONDS")
      echo "ws_echo $t round $round: steal ${stolen}% $line"
      ws_steal[$t]+="${ws_steal[$t]:+, }$stolen"
      # The proxy's CPU per echoed message (both directions), on cores shared with the client and the backend.
      cpu_us=-
      [ -z "$p" ] || cpu_us=$(awk -v m="$(field messages "$line")" -v d=$(( after - before )) -v hz="$hz" 'BEGIN {printf "%.1f", m ? d / hz / m * 1e6 : 0}')
      ws_lines[$t]+="$(field msgs_per_s "$line") cpu_us=$cpu_us $line"$'\n'
    done
  done
  # Each target's median round by messages/s stands for it, with the errors of every round.
  for t in $(targets); do
    median=$(median_line "${ws_lines[$t]}" "$BENCH_ROUNDS")
    for m in msgs_per_s p50_ms p99_ms p999_ms cpu_us; do record ws_echo "$t" "$m" "$(field "$m" "${median#* }")"; done
    record ws_echo "$t" errors "$(error_sum "${ws_lines[$t]}")"
    record ws_echo "$t" rounds "$(by_round "${ws_lines[$t]}" %s)"
    record ws_echo "$t" steal "${ws_steal[$t]}"
  done
fi

if has "$SCENARIOS" idle_ws; then
  for t in $(targets); do
    [ "$t" != direct ] || continue
    p=$(pids "$t")
    java_pid=""
    case "$t" in sandgate-*) java_pid="$p" ;; esac
    [ -z "$java_pid" ] || record idle_ws "$t" heap_before_kb "$(heap_used_kb "$java_pid")"
    record idle_ws "$t" rss_before_kb "$(rss_kb "$(pids "$t")")"
    stop="$RUN/idle-$t.stop"
    java -Xmx2g -cp "$CP" io.sandgate.bench.WebSocketLoad idle "$(ws_url "$t")" "$BENCH_IDLE_SESSIONS" "$stop" "$(cookie "$t")" > "$RUN/idle-$t.log" 2>&1 &
    client=$!
    PIDS+=($client)
    until grep -qs '^RESULT' "$RUN/idle-$t.log"; do
      kill -0 "$client" 2>/dev/null || { echo "idle client for $t died; see $RUN/idle-$t.log" >&2; exit 1; }
      sleep 0.5
    done
    sleep 2
    line=$(grep '^RESULT' "$RUN/idle-$t.log")
    [ -z "$java_pid" ] || record idle_ws "$t" heap_after_kb "$(heap_used_kb "$java_pid")"
    record idle_ws "$t" rss_after_kb "$(rss_kb "$(pids "$t")")"
    echo "idle_ws $t: $line"
    for m in open failed; do record idle_ws "$t" "$m" "$(field "$m" "$line")"; done
    touch "$stop"
    wait "$client" || true
    sleep 2   # let the proxy close its backend legs before the next target
  done
fi

JMH_CSV="-"
if has "$SCENARIOS" jmh; then
  JMH_CSV="$RUN/jmh.csv"
  # shellcheck disable=SC2086
  java -cp "$CP" org.openjdk.jmh.Main RouteLookupBenchmark $BENCH_JMH_ARGS \
    -p store=memory,redis -p redisAddress="redis://127.0.0.1:$REDIS_PORT" -rf csv -rff "$JMH_CSV" > "$RUN/jmh.log" 2>&1
  grep -A20 '^Benchmark' "$RUN/jmh.log" || true
fi

smoke=""
[ "$QUICK" -eq 0 ] || smoke="--smoke"
java -cp "$CP" io.sandgate.bench.SideBySideReport "$RESULTS" "$JMH_CSV" "$OUT" $smoke > "$RUN/report.md"
echo "Report written to $OUT (section also in $RUN/report.md)"

# --- the MCP and egress faces: in-process benchmarks that replace their own sections of $OUT ------
if has "$SCENARIOS" mcp; then
  # The gateways run inside these JVMs: they get the heap the gateway targets get.
  java $SANDGATE_JAVA_OPTS -cp "$CP" io.sandgate.bench.McpDeliveryBenchmark 100 "$BENCH_SECONDS" 3 "$OUT" 20 > "$RUN/mcp.log" 2>&1
  echo "MCP cross-replica delivery written to $OUT"
  java $SANDGATE_JAVA_OPTS -cp "$CP" io.sandgate.bench.McpStatelessBenchmark 100 "$BENCH_SECONDS" 5 "$OUT" > "$RUN/mcp-stateless.log" 2>&1
  echo "MCP 2026-07-28 stateless requests written to $OUT"
  java $SANDGATE_JAVA_OPTS -cp "$CP" io.sandgate.bench.McpAuthBenchmark 150 "$BENCH_SECONDS" 20 "$OUT" > "$RUN/mcp-auth.log" 2>&1
  echo "MCP token validation written to $OUT"
fi
if has "$SCENARIOS" egress; then
  java -cp "$CP" io.sandgate.bench.EgressFaultBenchmark "$BENCH_EGRESS_WORKFLOWS" "$OUT" > "$RUN/egress.log" 2>&1
  echo "Egress under faults written to $OUT"
fi
