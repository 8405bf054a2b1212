#!/usr/bin/env bash
# Runs a command with an unlocked gnome-keyring Secret Service on the current (private) D-Bus session.
set -euo pipefail
export KEYHOLD_TEST_KEYRING_HOME="$(mktemp -d)"
export XDG_DATA_HOME="$KEYHOLD_TEST_KEYRING_HOME/data"
mkdir -p "$XDG_DATA_HOME"
# An empty password unlocks (and creates) the login keyring non-interactively.
eval "$(printf '' | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)" || true
eval "$(gnome-keyring-daemon --start --components=secrets 2>/dev/null)" || true
export KEYHOLD_SECRET_SERVICE=1
exec "$@"
