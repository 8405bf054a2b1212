#!/usr/bin/env bash
# The README's test command (`npm test`): installs what the tests need on a fresh machine, builds,
# and runs the whole suite. Safe to run repeatedly.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
[ -d node_modules ] || npm ci
npx tsc -p tsconfig.json
# The keychain tests need a Secret Service: run the suite inside a private D-Bus session with
# gnome-keyring unlocked (scripts/with-keyring.sh), when available.
if command -v dbus-run-session >/dev/null 2>&1 && command -v gnome-keyring-daemon >/dev/null 2>&1; then
  exec dbus-run-session -- bash scripts/with-keyring.sh npx vitest run "$@"
fi
exec npx vitest run "$@"
