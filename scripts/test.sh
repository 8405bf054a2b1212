#!/usr/bin/env bash
# The README's test command (`npm test`): installs what the tests need on a fresh machine, builds,
# and runs the whole suite. Safe to run repeatedly. Extra arguments go to vitest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-test-env.sh
bash scripts/setup-docs-env.sh
# pkcs11js (managed keys) is built by node-gyp, which needs the Node headers: use the ones shipped
# with the running Node (NodeSource/Debian: /usr/include/node; official tarballs and nvm: <prefix>/
# include/node) instead of downloading them from nodejs.org.
node_prefix=$(node -p "require('path').resolve(process.execPath, '..', '..')")
if [ -z "${npm_config_nodedir:-}" ] && [ -f "$node_prefix/include/node/node.h" ]; then export npm_config_nodedir="$node_prefix"; fi
[ -d node_modules ] || npm ci
# The binding is an optional dependency: a failed build leaves managed-key tests skipped (they say why).
[ -f node_modules/pkcs11js/build/Release/pkcs11.node ] || echo "test: the pkcs11js binding is not built (needs g++, make, python3 and Node headers); PKCS#11 managed-key tests will be skipped" >&2
# Formatting and lint (biome.json): `biome ci` only reads, it never rewrites a file (`npm run format` does).
if [ -x node_modules/.bin/biome ]; then node_modules/.bin/biome ci .; else echo "test: biome is not installed (devDependency @biomejs/biome); format and lint check skipped" >&2; fi
npm run build --silent    # tsc, then the CLI fast-path bundle (scripts/bundle-cli.mjs)
# The single executable and the Debian package (issue 26), built once and reused while dist/ is
# unchanged (a hash of the inputs beside each); the package tests use them. A failure here is
# reported by those tests, naming the cause.
package_start=$SECONDS
if node scripts/package.mjs --if-stale && node scripts/package-deb.mjs --if-stale; then
  echo "test: executable and .deb ready in $((SECONDS - package_start)) s" >&2
else
  echo "test: building the executable or the .deb failed; the package tests will fail and say why" >&2
fi
# The keychain tests need a Secret Service: run the suite inside a private D-Bus session with an
# unlocked gnome-keyring (scripts/with-keyring.sh). Without dbus-run-session they skip, saying why.
if command -v dbus-run-session >/dev/null 2>&1; then
  exec dbus-run-session -- bash scripts/with-keyring.sh npx vitest run "$@"
fi
echo "test: dbus-run-session not found; keychain tests will be skipped" >&2
export KEYHOLD_SECRET_SERVICE_UNAVAILABLE="dbus-run-session is not installed"
exec npx vitest run "$@"
