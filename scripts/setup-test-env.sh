#!/usr/bin/env bash
# Installs the Debian packages the tests use, when missing and when we may (root with apt).
set -euo pipefail
need=()
command -v dbus-run-session >/dev/null 2>&1 || need+=(dbus dbus-x11)
command -v gnome-keyring-daemon >/dev/null 2>&1 || need+=(gnome-keyring)
command -v secret-tool >/dev/null 2>&1 || need+=(libsecret-tools)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 || echo "setup: apt-get install failed for ${need[*]}" >&2
  else
    echo "setup: missing ${need[*]} and cannot install (not root or no apt); keychain tests will be skipped" >&2
  fi
fi
