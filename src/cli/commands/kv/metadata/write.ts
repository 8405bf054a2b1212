/** `keyhold kv metadata put|patch PATH`: settings and custom metadata (no new version). */
import { collect, flag, type CommandSpec, type FlagSpec, type Invocation } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { boolFlag, intFlag, warn } from '../render.js';
import { apiPath, secretTarget, shownPath } from '../target.js';
import { MOUNT } from '../write.js';

const SETTINGS: FlagSpec[] = [
  flag('--max-versions <n>', 'versions to keep (0 = engine setting)'),
  flag('--cas-required [bool]', 'require check-and-set on writes'),
  flag('--delete-version-after <duration>', 'soft-delete versions this long after writing, e.g. 720h ("0s" clears)'),
  flag('--custom-metadata <key=value>', 'custom metadata pair (repeatable)', { parse: collect }),
  MOUNT,
];

async function metadataBody(opts: {
  maxVersions?: string;
  casRequired?: string | boolean;
  deleteVersionAfter?: string;
  customMetadata?: string[];
  removeCustomMetadata?: string[];
}): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const mv = intFlag('--max-versions', opts.maxVersions);
  if (mv !== undefined) body.max_versions = mv;
  const cr = boolFlag('--cas-required', opts.casRequired);
  if (cr !== undefined) body.cas_required = cr;
  if (opts.deleteVersionAfter !== undefined) body.delete_version_after = opts.deleteVersionAfter;
  if (opts.customMetadata || opts.removeCustomMetadata) {
    const cm: Record<string, unknown> = {};
    for (const p of opts.customMetadata ?? []) {
      const i = p.indexOf('=');
      if (i <= 0) throw new LocalError(`--custom-metadata: expected key=value, got "${p}"`);
      cm[p.slice(0, i)] = p.slice(i + 1);
    }
    for (const k of opts.removeCustomMetadata ?? []) cm[k] = null;
    body.custom_metadata = cm;
  }
  return body;
}

async function writeMetadata(inv: Invocation, method: 'POST' | 'PATCH'): Promise<void> {
  const t = await secretTarget(inv.client, inv.args.path, inv.opts.mount);
  const opts = method === 'PATCH' ? { headers: { 'Content-Type': 'application/merge-patch+json' } } : undefined;
  const res = await inv.client.request(method, apiPath(t, 'metadata'), await metadataBody(inv.opts), opts);
  warn(inv, res);
  inv.success(`Success! Data written to: ${shownPath(t, 'metadata')}`);
}

export const put: CommandSpec = {
  words: ['kv', 'metadata', 'put'],
  summary: 'Create or replace the settings and custom metadata of a secret (no new version)',
  args: [{ name: 'path', help: 'secret path' }],
  flags: SETTINGS,
  examples: ['keyhold kv metadata put --max-versions 5 --custom-metadata owner=ops secret/app/db'],
  run: (inv) => writeMetadata(inv, 'POST'),
};

export const patch: CommandSpec = {
  words: ['kv', 'metadata', 'patch'],
  summary: 'Change some settings or custom metadata keys of a secret',
  args: [{ name: 'path', help: 'secret path' }],
  flags: [
    ...SETTINGS,
    flag('--remove-custom-metadata <key>', 'remove this custom metadata key (repeatable)', { parse: collect }),
  ],
  run: (inv) => writeMetadata(inv, 'PATCH'),
};
