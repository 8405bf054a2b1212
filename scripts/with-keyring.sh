#!/usr/bin/env bash
# Runs a command with an unlocked gnome-keyring Secret Service on the current (private) D-Bus session,
# as `dbus-run-session -- bash scripts/with-keyring.sh <command...>` (scripts/test.sh does this).
#
# gnome-keyring creates the "login" collection on `--unlock` only when it is given a NON-EMPTY
# password on stdin: with an empty one it asks a system prompter (absent on a headless machine) and
# the collection never appears ("Object does not exist at path .../collection/login"). The keyring
# lives in a throwaway XDG_DATA_HOME, so the password only has to be unguessable for this run.
#
# Exports KEYHOLD_SECRET_SERVICE=1 when a probe secret could be stored, read and cleared (the keychain
# tests then must pass), otherwise KEYHOLD_SECRET_SERVICE_UNAVAILABLE=<reason> (they skip and say why).
set -uo pipefail
KEYHOLD_TEST_KEYRING_HOME="$(mktemp -d)"
export KEYHOLD_TEST_KEYRING_HOME
export XDG_DATA_HOME="$KEYHOLD_TEST_KEYRING_HOME/data"
# A private runtime dir too: gnome-keyring puts its control socket there, and a shared one (the
# default when XDG_RUNTIME_DIR is unset) would let two test runs on one machine meet each other.
export XDG_RUNTIME_DIR="$KEYHOLD_TEST_KEYRING_HOME/run"
mkdir -p "$XDG_DATA_HOME" "$XDG_RUNTIME_DIR"
chmod 700 "$KEYHOLD_TEST_KEYRING_HOME" "$XDG_RUNTIME_DIR"
trap 'rm -rf "$KEYHOLD_TEST_KEYRING_HOME"' EXIT

reason=""
if [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
  reason="no D-Bus session (run under dbus-run-session)"
elif ! command -v gnome-keyring-daemon >/dev/null 2>&1; then
  reason="gnome-keyring-daemon is not installed"
else
  pw="$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  out="$(printf '%s' "$pw" | gnome-keyring-daemon --unlock --components=secrets 2>/dev/null)" || true
  # Exports GNOME_KEYRING_CONTROL (when printed); harmless when empty.
  eval "$out"
  if command -v secret-tool >/dev/null 2>&1; then
    probe=""
    why=""
    # Up to ~15 s: on a loaded 2-core machine the daemon can take a while to answer.
    for _ in $(seq 1 30); do
      if why="$(printf 'probe' | timeout 10 secret-tool store --label='keyhold test probe' keyhold-probe "$$" 2>&1)"; then
        probe="$(timeout 10 secret-tool lookup keyhold-probe "$$" 2>/dev/null)"
        timeout 10 secret-tool clear keyhold-probe "$$" >/dev/null 2>&1 || true
        [ "$probe" = probe ] && break
      fi
      sleep 0.5
    done
    [ "$probe" = probe ] || reason="gnome-keyring started but a probe secret could not be stored and read back (${why:-no error text})"
  fi
fi

if [ -z "$reason" ]; then
  export KEYHOLD_SECRET_SERVICE=1
  echo "with-keyring: Secret Service (gnome-keyring) is up and unlocked for the tests" >&2
else
  export KEYHOLD_SECRET_SERVICE_UNAVAILABLE="$reason"
  echo "with-keyring: no usable Secret Service: $reason; keychain tests will be skipped" >&2
fi
"$@"
