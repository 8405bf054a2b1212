/**
 * The pkcs11js binding, required from node_modules. The single executable's bundle
 * (scripts/package.mjs) replaces this module with one that bundles pkcs11js and loads its native
 * part through embedded-addon.ts: this file is the one place that names the package.
 */
import { createRequire } from 'node:module';

/** pkcs11js's exports (throws when the optional dependency is missing or did not build). */
export function requirePkcs11js(): unknown {
  return createRequire(import.meta.url)('pkcs11js');
}
