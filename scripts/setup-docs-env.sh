#!/usr/bin/env bash
# Installs what the docs tests drive for real (zsh and fish completions, man pages rendered by groff),
# when missing and when we may (root with apt). Quiet; safe to run repeatedly.
set -euo pipefail
need=()
command -v zsh >/dev/null 2>&1 || need+=(zsh)
command -v fish >/dev/null 2>&1 || need+=(fish)
command -v groff >/dev/null 2>&1 || need+=(groff-base)
command -v man >/dev/null 2>&1 || need+=(man-db)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup-docs: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 || echo "setup-docs: apt-get install failed for ${need[*]}" >&2
  else
    echo "setup-docs: missing ${need[*]} and cannot install (not root or no apt); those docs tests will fail" >&2
  fi
fi
