/**
 * Regenerate the committed docs from the code: completions/, man/, docs/reference/cli.md (all from
 * the command list, src/cli/commands/index.ts) and docs/openapi.json (from the route tables).
 * `npm run docs` (after a build) runs this file; test/unit/docs/drift.test.ts regenerates in memory and
 * fails when the committed files differ.
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { COMMANDS } from '../cli/commands/index.js';
import { VERSION } from '../version.js';
import { DEV_MOUNTS, mountedRoutes } from './catalog.js';
import { buildOpenApi } from './openapi.js';
import { describeCommand, type CommandDoc, type MountedRoute } from './cli-model.js';
import { describeList } from './list-model.js';
import { completionSpec } from './completion-spec.js';
import { bashCompletion } from './completion-bash.js';
import { zshCompletion } from './completion-zsh.js';
import { fishCompletion } from './completion-fish.js';
import { manPages } from './man.js';
import { commandReference } from './reference.js';

/** Shells `keyhold completion` knows. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
/** A supported shell. */
export type Shell = (typeof SHELLS)[number];

/** Committed file of each shell's completion script. */
export const COMPLETION_FILES: Record<Shell, string> = {
  bash: 'completions/keyhold.bash',
  zsh: 'completions/_keyhold',
  fish: 'completions/keyhold.fish',
};

/** The command that regenerates everything (named in drift-test failures). */
export const REGENERATE = 'npm run docs';

/** Routes of the dev mounts, attached to commands by cli hint. */
function devRoutes(): MountedRoute[] {
  return mountedRoutes(DEV_MOUNTS).flatMap((m) => m.routes.map((route) => ({ mountPath: m.path, route })));
}

/** The command model of a commander program (any program; the generators use listModel). */
export function commandModel(program: Command): CommandDoc {
  return describeCommand(program, devRoutes());
}

/** The command model of keyhold, from the command list (src/cli/commands/index.ts). */
export function listModel(): CommandDoc {
  return describeList(COMMANDS, devRoutes());
}

/** The completion script of `shell`. */
export function completionScript(shell: Shell, model: CommandDoc = listModel()): string {
  const spec = completionSpec(model);
  return shell === 'bash' ? bashCompletion(spec) : shell === 'zsh' ? zshCompletion(spec) : fishCompletion(spec);
}

/** Every generated file, by path relative to the repository root. */
export function generateAll(model: CommandDoc = listModel()): Record<string, string> {
  const spec = completionSpec(model);
  const out: Record<string, string> = {
    [COMPLETION_FILES.bash]: bashCompletion(spec),
    [COMPLETION_FILES.zsh]: zshCompletion(spec),
    [COMPLETION_FILES.fish]: fishCompletion(spec),
    'docs/reference/cli.md': commandReference(model),
    // The API as `keyhold server --dev` serves it (transit/ and secret/ mounted), for client generators.
    'docs/openapi.json': JSON.stringify(buildOpenApi(mountedRoutes(DEV_MOUNTS), { version: VERSION }), null, 2) + '\n',
  };
  for (const [name, text] of Object.entries(manPages(model, VERSION))) out[`man/${name}`] = text;
  return out;
}

/** The package.json `man` field for the generated pages. */
export function manField(files: Record<string, string>): string[] {
  return Object.keys(files)
    .filter((f) => f.startsWith('man/'))
    .sort()
    .map((f) => `./${f}`);
}

/** Files in the generated directories that the generator no longer writes. */
export function staleFiles(root: string, files: Record<string, string>): string[] {
  const stale: string[] = [];
  for (const dir of ['man', 'completions']) {
    let names: string[] = [];
    try {
      names = readdirSync(join(root, dir));
    } catch {
      continue;
    }
    for (const n of names) if (!(`${dir}/${n}` in files) && !n.startsWith('.')) stale.push(`${dir}/${n}`);
  }
  return stale.sort();
}

/** Write every file under `root`, remove stale ones; returns the paths written. */
export function writeAll(root: string, files = generateAll()): string[] {
  for (const s of staleFiles(root, files)) rmSync(join(root, s));
  for (const [rel, text] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, text);
  }
  return Object.keys(files).sort();
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (isMain) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const files = generateAll();
  const written = writeAll(root, files);
  process.stderr.write(`docs: wrote ${written.length} files\n${written.map((w) => `  ${w}`).join('\n')}\n`);
  process.stderr.write(`docs: package.json "man": ${JSON.stringify(manField(files))}\n`);
}
