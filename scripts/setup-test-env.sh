#!/usr/bin/env bash
# Installs the Debian packages the tests use, when missing and when we may (root with apt-get):
# - a private D-Bus session and gnome-keyring as the Secret Service (keychain tests);
# - golang-go, to build the helper that renders templates with Go's own text/template (agent tests);
# - jq for the vault-face script tests (test/integration/vault-face-*.test.ts);
# - prometheus, gpg and python3-hvac for the operations tests (issue 27);
# - softhsm2 (a PKCS#11 token in a directory) and opensc (pkcs11-tool) for the managed-key tests,
#   and g++, make, python3 for node-gyp to build the pkcs11js binding;
# - dpkg, lintian and adduser for the Debian package tests;
# - rsyslog for the syslog audit device test.
# Never fails the test run: without them the tests that need them skip and print why.
set -euo pipefail
# PostgreSQL for the cluster tests (its own script; never fails the run).
bash "$(dirname "$0")/setup-postgres.sh" || true
need=()
command -v dbus-run-session >/dev/null 2>&1 || need+=(dbus-daemon dbus-x11)
command -v gnome-keyring-daemon >/dev/null 2>&1 || need+=(gnome-keyring)
command -v secret-tool >/dev/null 2>&1 || need+=(libsecret-tools)
command -v softhsm2-util >/dev/null 2>&1 || need+=(softhsm2)
command -v pkcs11-tool >/dev/null 2>&1 || need+=(opensc)
# node-gyp builds the pkcs11js binding during `npm ci` (scripts/test.sh runs this script first).
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v make >/dev/null 2>&1 || need+=(make)
command -v python3 >/dev/null 2>&1 || need+=(python3)
# Debian's jq: the vault-face tests pipe `vault ... -format=json` into it, as scripts do.
command -v jq >/dev/null 2>&1 || need+=(jq)
# rsyslog receives the syslog audit device's entries (test/integration/share-audit.test.ts runs its own rsyslogd in a temp dir).
command -v rsyslogd >/dev/null 2>&1 || [ -x /usr/sbin/rsyslogd ] || need+=(rsyslog)
# Prometheus scrapes a daemon in test/integration/ops-telemetry.test.ts; gpg decrypts PGP-encrypted
# key shares in test/integration/ops-generate-root.test.ts (issue 27).
command -v prometheus >/dev/null 2>&1 || need+=(prometheus)
command -v gpg >/dev/null 2>&1 || need+=(gpg)
# hvac's own key tests run with Debian's hvac library (test/compat/hvac_test_key.py).
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import hvac' >/dev/null 2>&1 || need+=(python3-hvac)
# Go's text/template cross-checks the agent's template engine (test/unit/agent/template-go.test.ts).
command -v go >/dev/null 2>&1 || need+=(golang-go)
# systemd-analyze checks the unit of `keyhold service install` (test/unit/cli/service.test.ts).
command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
# oathtool (oath-toolkit) computes TOTP codes independently of keyhold (login MFA tests).
command -v oathtool >/dev/null 2>&1 || need+=(oathtool)
# The Debian package tests (test/integration/package-deb.test.ts): dpkg-deb builds and inspects the
# package, lintian checks it; adduser is what its postinst creates the service user with.
command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)
command -v lintian >/dev/null 2>&1 || need+=(lintian)
command -v adduser >/dev/null 2>&1 || need+=(adduser)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${need[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || echo "setup: apt-get update failed" >&2
  if ! apt-get install -y -qq --no-install-recommends "${need[@]}" >/tmp/keyhold-setup-apt.log 2>&1; then
    echo "setup: apt-get install failed for ${need[*]} (see /tmp/keyhold-setup-apt.log); the tests needing them will be skipped" >&2
  fi
else
  echo "setup: missing ${need[*]} and cannot install (not root or no apt-get); the tests needing them will be skipped" >&2
fi
exit 0
