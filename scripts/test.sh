#!/usr/bin/env bash
# Runs the whole test suite. Installs what the tests need when it is missing (Debian/Ubuntu):
# a JDK 17 and Maven are assumed; redis-server is installed with apt-get (as root, or via sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v redis-server >/dev/null 2>&1 || need_apt+=(redis-server)

if [ ${#need_apt[@]} -gt 0 ]; then
  echo "Installing test dependencies: ${need_apt[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

# A redis-server started by the distribution is not used: every test starts its own on a free port.
exec mvn -B -ntp verify "$@"
