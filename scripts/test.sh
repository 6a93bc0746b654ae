#!/usr/bin/env bash
# Runs the whole test suite. Installs what the tests need when it is missing (Debian/Ubuntu):
# a JDK 17 and Maven are assumed; redis-server, and for the browser test (NoVncBrowserIT) a VNC
# server, websockify, Debian's noVNC and Chromium, are installed with apt-get (as root, or via
# sudo); the Node packages of the browser test, of the TypeScript MCP client test
# (TypeScriptSdkClientIT) and of the MCP conformance suite with npm ci. Nothing is installed twice.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)
# The egress tests run Debian's tinyproxy and squid as independent forward proxies.
command -v tinyproxy >/dev/null 2>&1 || need_apt+=(tinyproxy)
[ -x /usr/sbin/squid ] || need_apt+=(squid)
# The drain's browser test (DrainBrowserIT) puts two gateway replicas behind Debian's HAProxy.
[ -x /usr/sbin/haproxy ] || need_apt+=(haproxy)
command -v Xvnc >/dev/null 2>&1 || need_apt+=(tigervnc-standalone-server)
command -v xsetroot >/dev/null 2>&1 || need_apt+=(x11-xserver-utils)
command -v websockify >/dev/null 2>&1 || need_apt+=(websockify)
[ -f /usr/share/novnc/vnc.html ] || need_apt+=(novnc)
# The browser test drives Debian's Chromium; it never downloads a browser of its own.
[ -x /usr/bin/chromium ] || need_apt+=(chromium fonts-dejavu-core)
# The inspected-CONNECT tests run curl and git through the gateway as a sandbox's tools would.
command -v curl >/dev/null 2>&1 || need_apt+=(curl)
command -v git >/dev/null 2>&1 || need_apt+=(git)
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "Installing test dependencies: ${need_apt[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# The three Node package sets install side by side (each npm ci waits mostly on its own files);
# the script goes on once all are in, and stops if one failed.
installs=()

# Node packages of the browser test (playwright-core, @novnc/novnc), exactly as locked.
if [ ! -d src/test/browser/node_modules/playwright-core ] || [ ! -d src/test/browser/node_modules/@novnc/novnc ]; then
  echo "Installing browser test packages (npm ci in src/test/browser)"
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix src/test/browser --no-audit --no-fund --loglevel=error >/dev/null &
  installs+=($!)
fi

# Node packages of the TypeScript MCP SDK tests (@modelcontextprotocol/sdk 1.x, the 2.x client and
# server, zod), exactly as locked; the 2.x server is the reference server of ConformanceIT.
if [ ! -d src/test/mcp-ts/node_modules/@modelcontextprotocol/sdk ] || [ ! -d src/test/mcp-ts/node_modules/@modelcontextprotocol/server ] \
  || [ ! -d src/test/mcp-ts/node_modules/@modelcontextprotocol/client ] || [ ! -d src/test/mcp-ts/node_modules/zod ]; then
  echo "Installing MCP TypeScript client test packages (npm ci in src/test/mcp-ts)"
  npm ci --prefix src/test/mcp-ts --no-audit --no-fund --loglevel=error >/dev/null &
  installs+=($!)
fi

# The official MCP conformance suite (@modelcontextprotocol/conformance), exactly as locked; on Node
# 20 it runs with the small load hook in src/test/conformance/compat-hooks.mjs.
if [ ! -d src/test/conformance/node_modules/@modelcontextprotocol/conformance ]; then
  echo "Installing the MCP conformance suite (npm ci in src/test/conformance)"
  npm ci --prefix src/test/conformance --no-audit --no-fund --loglevel=error >/dev/null &
  installs+=($!)
fi

for install in "${installs[@]}"; do
  wait "$install"
done

# Maven's own JVM compiles, packages and hands classes to the test JVMs: short work, done faster
# and at half the CPU by the C1 compiler alone and the serial collector (clean test-compile: 21 s and
# 41 s of CPU against 16 s and 19 s). Only here, not in .mvn/jvm.config: the benchmarks that run
# under exec:java need the full compiler. A MAVEN_OPTS of the caller's comes after, and wins.
export MAVEN_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC ${MAVEN_OPTS:-}"

# A redis-server started by the distribution is not used: every test starts its own on a free port.
# The runner jar (maven-shade-plugin, after the tests) is left out: no test uses it, and the run
# command of the README builds it.
exec mvn -B -ntp verify -Drunner.skip=true "$@"
