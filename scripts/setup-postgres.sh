#!/usr/bin/env bash
# Installs Debian's PostgreSQL server for the cluster tests (test/support/postgres.ts starts a
# throwaway cluster with initdb/pg_ctl in a temp dir), when missing and when we may (root with
# apt-get). Idempotent. Never fails the test run: without a server the PostgreSQL tests skip, saying why.
set -euo pipefail
have_server() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1; }
have_server && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing postgresql" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || echo "setup: apt-get update failed" >&2
  # The Debian package starts a system cluster on port 5432; the tests do not use it.
  if ! apt-get install -y -qq --no-install-recommends postgresql >/tmp/keyhold-setup-postgres.log 2>&1; then
    echo "setup: apt-get install postgresql failed (see /tmp/keyhold-setup-postgres.log); PostgreSQL tests will be skipped" >&2
  fi
else
  echo "setup: PostgreSQL server missing and cannot install (not root or no apt-get); PostgreSQL tests will be skipped" >&2
fi
exit 0
