#!/usr/bin/env bash
# Runs ConformanceIT (the official MCP conformance suite, directly, through one gateway and through
# two replicas sharing Redis) against the conformance repository's own example server instead of
# Sandgate's reference server. That server is not published on npm, so the test command cannot
# install it: check the repository out yourself, at the commit you want to measure, and pass its path.
#
#   scripts/conformance-official.sh /path/to/modelcontextprotocol/conformance
#
# Its dependencies come from npm (npm ci in examples/servers/typescript); nothing of it is copied here.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(cd "${1:?usage: $0 <checkout of github.com/modelcontextprotocol/conformance>}" && pwd)"
SERVER="$REPO/examples/servers/typescript"
[ -f "$SERVER/everything-server.ts" ] || { echo "no examples/servers/typescript/everything-server.ts in $REPO" >&2; exit 2; }
echo "conformance repository at $(git -C "$REPO" rev-parse HEAD 2>/dev/null || echo 'unknown commit')"
[ -x "$SERVER/node_modules/.bin/tsx" ] || npm ci --prefix "$SERVER" --no-audit --no-fund
npm ci --prefix src/test/conformance --no-audit --no-fund --silent
mvn -B -ntp test -Dtest=ConformanceIT -Dsurefire.failIfNoSpecifiedTests=false -Dsandgate.conformance.server="$SERVER"
grep -h "^conformance\|^  " target/surefire-reports/io.sandgate.mcp.ConformanceIT-output.txt || true
