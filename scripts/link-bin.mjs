#!/usr/bin/env node
// Links the project's own CLI into node_modules/.bin, so `npx keyhold ...` works from a fresh clone
// after `npm ci` (npm links the bins of dependencies only, never the project's own). Run by `prepare`.
import { chmodSync, existsSync, lstatSync, mkdirSync, readlinkSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const binDir = join(root, 'node_modules', '.bin');
const link = join(binDir, 'keyhold');
const target = join('..', '..', 'bin', 'keyhold.js');
if (existsSync(join(root, 'node_modules'))) {
  mkdirSync(binDir, { recursive: true });
  let current = null;
  try {
    current = lstatSync(link).isSymbolicLink() ? readlinkSync(link) : 'not-a-link';
  } catch {
    /* absent */
  }
  if (current !== target) {
    if (current !== null) unlinkSync(link);
    symlinkSync(target, link);
  }
  chmodSync(join(root, 'bin', 'keyhold.js'), 0o755);
}
