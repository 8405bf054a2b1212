/**
 * `keyhold kv ...`: the KV v2 commands, following `vault kv` habits. The mount is resolved from the path
 * like `vault kv` does (`secret/foo` -> mount `secret/`, secret `foo`; the longest KV mount from
 * `sys/mounts`, else the first segment), or given with `--mount`.
 * Output: tables with sections on stdout (like vault), Vault's JSON shape with `--format json`,
 * `--field k` prints one raw value; success notes go to stderr.
 */
import { Command, Option } from 'commander';
import type { CliContext } from '../context.js';
import { Client, LocalError, ServerError, type ApiResponse } from '../client.js';
import { table } from '../output.js';

/** A resolved secret location. */
interface Target {
  /** Mount path without slashes, e.g. "secret" or "team/kv". */
  mount: string;
  /** Secret path inside the mount, without leading/trailing slashes ("" for the mount root). */
  path: string;
  /** KV version 1 mount: plain paths, no data/ or metadata/ (as `vault kv` decides from options.version). */
  v1?: boolean;
}

/** Commands that exist only for KV version 2. */
function needV2(t: Target, what: string): void {
  if (t.v1) throw new LocalError(`${what} needs KV version 2, and ${t.mount}/ is a KV version 1 mount (upgrade it with \`keyhold write sys/mounts/${t.mount}/tune options=version=2\`)`);
}

function trimSlashes(s: string): string {
  return s.replace(/^\/+|\/+$/g, '');
}

function enc(p: string): string {
  return p === '' ? '' : p.split('/').map(encodeURIComponent).join('/');
}

/** API path `<mount>/<word>/<path>`, URL-encoded per segment. */
function apiPath(t: Target, word: string): string {
  return [enc(t.mount), t.v1 ? '' : word, enc(t.path)].filter((s) => s !== '').join('/');
}

/** Human path `<mount>/<word>/<path>` for messages. */
function shownPath(t: Target, word: string): string {
  return [t.mount, t.v1 ? '' : word, t.path].filter((s) => s !== '').join('/');
}

/** Resolve a path that must name a secret (not just a mount). */
async function secretTarget(client: Client, arg: string, mountFlag?: string): Promise<Target> {
  const t = await resolveTarget(client, arg, mountFlag);
  if (t.path === '') throw new LocalError(`"${arg}" names the mount ${t.mount}/, not a secret in it: give e.g. ${t.mount}/app/db`);
  return t;
}

/** Resolve mount and secret path from the argument (and `--mount`), asking the daemon for its mounts. */
export async function resolveTarget(client: Client, arg: string, mountFlag?: string): Promise<Target> {
  if (mountFlag !== undefined && mountFlag !== '') return { mount: trimSlashes(mountFlag), path: trimSlashes(arg), v1: await isV1(client, trimSlashes(mountFlag)) };
  const clean = trimSlashes(arg);
  if (clean === '') throw new LocalError('give a path such as secret/foo (or --mount secret foo)');
  let mounts: Array<[string, boolean]> | null = null;
  try {
    const res = await client.read('sys/mounts');
    const table = ((res.body?.data ?? res.body ?? {}) as Record<string, unknown>) || {};
    mounts = Object.entries(table)
      .filter(([, v]) => v && typeof v === 'object' && ['kv', 'generic'].includes(String((v as { type?: unknown }).type)))
      .map(([k, v]) => [k, (v as { options?: { version?: string } | null }).options?.version !== '2']);
  } catch (e) {
    // A token without read on sys/mounts still works: fall back to the first path segment.
    if (!(e instanceof ServerError)) throw e;
  }
  if (mounts) {
    const best = mounts.filter(([m]) => (clean + '/').startsWith(m)).sort((a, b) => b[0].length - a[0].length)[0];
    if (!best) throw new LocalError(`no KV version 2 mount found for "${arg}" (nor a KV version 1 mount); mount one with \`keyhold secrets enable -path=NAME kv-v2\` or pass --mount`);
    return { mount: trimSlashes(best[0]), path: trimSlashes(clean.slice(best[0].length)), v1: best[1] };
  }
  const i = clean.indexOf('/');
  const mount = i === -1 ? clean : clean.slice(0, i);
  return { mount, path: i === -1 ? '' : clean.slice(i + 1), v1: await isV1(client, mount) };
}

/** The KV version of a mount from `sys/internal/ui/mounts/<mount>` (the vault CLI's preflight); v2 when unknown. */
async function isV1(client: Client, mount: string): Promise<boolean> {
  try {
    const res = await client.read(`sys/internal/ui/mounts/${enc(mount)}`);
    const v = ((res.body?.data as { options?: { version?: string } | null } | undefined)?.options ?? {})?.version;
    return v !== undefined && v !== '2';
  } catch {
    return false;
  }
}

/** A "== Title ==" header sized to a key/value table whose longest key is `keyWidth`. */
function header(title: string, keyWidth: number): string {
  let eq = Math.max(3, keyWidth) + 4 + 5 - (title.length + 2);
  if (eq <= 0) eq = 4;
  if (eq % 2) eq++;
  const side = '='.repeat(eq / 2);
  return `${side} ${title} ${side}`;
}

/** Vault's rendering of values in kv tables: nil as <nil>, an unset time as n/a, objects as JSON. */
function show(key: string, v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (v === '' && (key === 'deletion_time' || key.endsWith('_time'))) return 'n/a';
  if (typeof v === 'string') return v;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function kvSection(title: string, data: Record<string, unknown>): string {
  const shown: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(data)) shown[k] = show(k, v);
  const keyWidth = Math.max(0, ...Object.keys(data).map((k) => k.length));
  return `${header(title, keyWidth)}\n${Object.keys(shown).length ? table(shown) : 'n/a\n'}`;
}

function pathSection(title: string, p: string): string {
  return `${header(title, p.length - 9)}\n${p}\n`;
}

function dataOf(res: ApiResponse): Record<string, unknown> {
  return (res.body?.data ?? {}) as Record<string, unknown>;
}

function versionsOf(v: string | undefined, required: boolean): number[] | undefined {
  if (v === undefined || v === '') {
    if (required) throw new LocalError('no versions provided: use --versions 1,2');
    return undefined;
  }
  const out = v.split(',').map((s) => s.trim());
  if (!out.every((s) => /^\d+$/.test(s))) throw new LocalError(`--versions: expected comma-separated version numbers, got "${v}"`);
  return out.map(Number);
}

function intFlag(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim())) throw new LocalError(`${name}: expected a non-negative integer, got "${v}"`);
  return Number(v.trim());
}

function boolFlag(name: string, v: string | boolean | undefined): boolean | undefined {
  if (v === undefined || typeof v === 'boolean') return v;
  if (/^(1|t|true)$/i.test(v)) return true;
  if (/^(0|f|false)$/i.test(v)) return false;
  throw new LocalError(`${name}: expected true or false, got "${v}"`);
}

/** Register the kv commands. */
export function register(program: Command, ctx: CliContext): void {
  const kv = program.command('kv').description('Versioned key/value secrets (KV version 2), like `vault kv`');
  const mountOpt = () => new Option('--mount <path>', 'KV mount; then PATH is relative to it (default: resolved from PATH)');

  /** Secret data from `k=v k=@file k=-` pairs, or a whole JSON object from `-` (stdin) or `@file.json`. */
  async function secretData(pairs: string[]): Promise<Record<string, unknown>> {
    if (pairs.length === 0) throw new LocalError('must supply data: key=value pairs, or - / @file.json with a JSON object');
    if (pairs.length === 1 && (pairs[0] === '-' || (pairs[0]!.startsWith('@') && !pairs[0]!.includes('=')))) {
      const text = await ctx.valueOf(pairs[0]!);
      let v: unknown;
      try {
        v = JSON.parse(text);
      } catch {
        throw new LocalError('expected a JSON object on stdin or in the file');
      }
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new LocalError('expected a JSON object on stdin or in the file');
      return v as Record<string, unknown>;
    }
    return ctx.parsePairs(pairs);
  }

  /** Print per --field / --format, else the table made by `tableText`. */
  async function emit(cmd: Command, body: unknown, fieldSource: unknown, tableText: () => string): Promise<void> {
    const g = ctx.globals(cmd);
    if (g.field) return ctx.print(cmd, fieldSource);
    if (g.format && g.format !== 'table') return ctx.print(cmd, body);
    process.stdout.write(tableText());
  }

  async function writeVersion(cmd: Command, t: Target, method: 'POST' | 'PATCH', body: Record<string, unknown>): Promise<void> {
    const client = ctx.client(cmd);
    const headers = method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : undefined;
    const res = await client.request(method, apiPath(t, 'data'), body, { allowStatus: method === 'PATCH' ? [404] : [], headers });
    if (res.status === 404) {
      if (res.body?.data) throw new ServerError(404, [`the current version of ${shownPath(t, 'data')} is deleted or destroyed; undelete it or write a new version with kv put`], res.body);
      throw new ServerError(404, [`no secret at ${shownPath(t, 'data')}; create it with kv put`], res.body);
    }
    for (const w of (res.body?.warnings as string[] | null) ?? []) process.stderr.write(`WARNING! ${w}\n`);
    const meta = dataOf(res);
    await emit(cmd, res.body, meta, () => `${pathSection('Secret Path', shownPath(t, 'data'))}\n${kvSection('Metadata', meta)}`);
  }

  kv.command('put')
    .description('Write a new version of a secret (replaces all keys)')
    .argument('<path>', 'secret path, e.g. secret/app/db')
    .argument('[data...]', 'key=value, key=@file, key=- (stdin); or one - / @file.json holding a JSON object')
    .option('--cas <version>', 'check-and-set: write only if the current version is this (0 = only if absent)')
    .addOption(mountOpt())
    .addHelpText('after', '\nExamples:\n  $ keyhold kv put secret/app/db user=admin password=@pw.txt\n  $ printf s3cr3t | keyhold kv put --cas 1 secret/app/db password=-\n  $ keyhold kv put secret/app/config - < config.json')
    .action(async (path: string, pairs: string[], opts: { cas?: string; mount?: string }, cmd: Command) => {
      const data = await secretData(pairs);
      const t = await secretTarget(ctx.client(cmd), path, opts.mount);
      if (t.v1) {
        await ctx.client(cmd).write(apiPath(t, ''), data);
        process.stderr.write(`Success! Data written to: ${shownPath(t, '')}\n`);
        return;
      }
      const body: Record<string, unknown> = { data };
      const cas = intFlag('--cas', opts.cas);
      if (cas !== undefined) body.options = { cas };
      await writeVersion(cmd, t, 'POST', body);
    });

  kv.command('patch')
    .description('Change some keys of a secret, keeping the others (creates a new version)')
    .argument('<path>', 'secret path')
    .argument('[data...]', 'key=value, key=@file, key=- (stdin); or one - / @file.json holding a JSON object')
    .option('--cas <version>', 'check-and-set: patch only if the current version is this')
    .option('--remove <key>', 'remove this key (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .addOption(mountOpt())
    .addHelpText('after', '\nExamples:\n  $ keyhold kv patch secret/app/db password=@new.txt\n  $ keyhold kv patch --remove old_key secret/app/db')
    .action(async (path: string, pairs: string[], opts: { cas?: string; remove?: string[]; mount?: string }, cmd: Command) => {
      const data: Record<string, unknown> = pairs.length || !opts.remove?.length ? await secretData(pairs) : {};
      for (const k of opts.remove ?? []) data[k] = null;
      const t = await secretTarget(ctx.client(cmd), path, opts.mount);
      needV2(t, 'kv patch');
      const body: Record<string, unknown> = { data };
      const cas = intFlag('--cas', opts.cas);
      if (cas !== undefined) body.options = { cas };
      await writeVersion(cmd, t, 'PATCH', body);
    });

  kv.command('get')
    .description('Read a secret (current version, or --version=N)')
    .argument('<path>', 'secret path')
    // The global -v/--version flag takes `--version N`; `--version=N` reaches this option.
    .option('--version <n>', 'version to read; write it as --version=N (0 = current)')
    .addOption(mountOpt())
    .addHelpText('after', '\nExamples:\n  $ keyhold kv get secret/app/db\n  $ keyhold kv get --version=2 secret/app/db\n  $ keyhold --field password kv get secret/app/db')
    .action(async (path: string, opts: { version?: string; mount?: string }, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = await secretTarget(client, path, opts.mount);
      const version = intFlag('--version', opts.version);
      if (t.v1) {
        if (version) needV2(t, 'kv get --version');
        const r1 = await client.request('GET', apiPath(t, ''), undefined, { allowStatus: [404] });
        if (r1.status === 404) throw new ServerError(404, [`No value found at ${shownPath(t, '')}`], r1.body);
        const d1 = dataOf(r1);
        await emit(cmd, r1.body, d1, () => table(Object.fromEntries(Object.entries(d1).map(([k, v]) => [k, show(k, v)]))));
        return;
      }
      const q = version ? `?version=${version}` : '';
      const res = await client.request('GET', apiPath(t, 'data') + q, undefined, { allowStatus: [404] });
      const d = dataOf(res);
      if (res.status === 404) {
        const meta = d.metadata as Record<string, unknown> | undefined;
        if (!meta) throw new ServerError(404, [`No value found at ${shownPath(t, 'data')}`], res.body);
        if (!ctx.globals(cmd).field) await emit(cmd, res.body, meta, () => `${pathSection('Secret Path', shownPath(t, 'data'))}\n${kvSection('Metadata', meta)}`);
        throw new ServerError(404, [`version ${String(meta.version)} of ${shownPath(t, 'data')} is ${meta.destroyed ? 'destroyed' : 'deleted'}`], res.body);
      }
      const data = (d.data ?? {}) as Record<string, unknown>;
      const meta = (d.metadata ?? {}) as Record<string, unknown>;
      await emit(cmd, res.body, data, () => `${pathSection('Secret Path', shownPath(t, 'data'))}\n${kvSection('Metadata', meta)}\n${kvSection('Data', data)}`);
    });

  kv.command('list')
    .description('List secrets and folders (folders end with /)')
    .argument('[path]', 'folder, e.g. secret/ or secret/app', '')
    .addOption(mountOpt())
    .action(async (path: string, opts: { mount?: string }, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = await resolveTarget(client, path, opts.mount);
      const res = await client.request('LIST', apiPath(t, 'metadata'), undefined, { allowStatus: [404] });
      const keys = (dataOf(res).keys ?? []) as string[];
      if (res.status === 404 || keys.length === 0) throw new ServerError(404, [`No value found at ${shownPath(t, 'metadata')}/`], res.body);
      await emit(cmd, keys, keys, () => `Keys\n----\n${keys.join('\n')}\n`);
    });

  kv.command('delete')
    .description('Soft-delete the current version, or --versions (undo with kv undelete)')
    .argument('<path>', 'secret path')
    .option('--versions <list>', 'comma-separated versions to delete instead of the current one')
    .addOption(mountOpt())
    .action(async (path: string, opts: { versions?: string; mount?: string }, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = await secretTarget(client, path, opts.mount);
      const versions = versionsOf(opts.versions, false);
      if (versions) needV2(t, 'kv delete --versions');
      if (versions) await client.request('POST', apiPath(t, 'delete'), { versions });
      else await client.request('DELETE', apiPath(t, 'data'));
      process.stderr.write(`Success! Data deleted (if it existed) at: ${shownPath(t, versions ? 'delete' : 'data')}\n`);
    });

  for (const [name, word, what] of [
    ['undelete', 'undelete', 'Restore soft-deleted versions'],
    ['destroy', 'destroy', 'Permanently remove the data of versions (cannot be undone)'],
  ] as const) {
    kv.command(name)
      .description(what)
      .argument('<path>', 'secret path')
      .requiredOption('--versions <list>', 'comma-separated versions')
      .addOption(mountOpt())
      .action(async (path: string, opts: { versions?: string; mount?: string }, cmd: Command) => {
        const client = ctx.client(cmd);
        const t = await secretTarget(client, path, opts.mount);
        needV2(t, `kv ${name}`);
        await client.request('POST', apiPath(t, word), { versions: versionsOf(opts.versions, true) });
        process.stderr.write(`Success! Data written to: ${shownPath(t, word)}\n`);
      });
  }

  const metadata = kv.command('metadata').description('Settings, custom metadata and version history of secrets');

  metadata
    .command('get')
    .description('Show the metadata and version history of a secret')
    .argument('<path>', 'secret path')
    .addOption(mountOpt())
    .action(async (path: string, opts: { mount?: string }, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = await secretTarget(client, path, opts.mount);
      const res = await client.request('GET', apiPath(t, 'metadata'), undefined, { allowStatus: [404] });
      if (res.status === 404) throw new ServerError(404, [`No value found at ${shownPath(t, 'metadata')}`], res.body);
      const d = dataOf(res);
      await emit(cmd, res.body, d, () => {
        const { versions, ...rest } = d as { versions?: Record<string, Record<string, unknown>> };
        let out = `${pathSection('Metadata Path', shownPath(t, 'metadata'))}\n${kvSection('Metadata', rest)}`;
        const nums = Object.keys(versions ?? {}).map(Number).sort((a, b) => a - b);
        for (const n of nums) out += `\n${kvSection(`Version ${n}`, versions![String(n)]!)}`;
        return out;
      });
    });

  function metadataCommand(name: 'put' | 'patch', what: string): Command {
    return metadata
      .command(name)
      .description(what)
      .argument('<path>', 'secret path')
      .option('--max-versions <n>', 'versions to keep (0 = engine setting)')
      .option('--cas-required [bool]', 'require check-and-set on writes')
      .option('--delete-version-after <duration>', 'soft-delete versions this long after writing, e.g. 720h ("0s" clears)')
      .option('--custom-metadata <key=value>', 'custom metadata pair (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
      .addOption(mountOpt());
  }

  async function metadataBody(opts: { maxVersions?: string; casRequired?: string | boolean; deleteVersionAfter?: string; customMetadata?: string[]; removeCustomMetadata?: string[] }): Promise<Record<string, unknown>> {
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

  metadataCommand('put', 'Create or replace the settings and custom metadata of a secret (no new version)')
    .addHelpText('after', '\nExamples:\n  $ keyhold kv metadata put --max-versions 5 --custom-metadata owner=ops secret/app/db')
    .action(async (path: string, opts: Record<string, string | string[] | boolean | undefined>, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = await secretTarget(client, path, opts.mount as string | undefined);
      const res = await client.request('POST', apiPath(t, 'metadata'), await metadataBody(opts as never));
      for (const w of (res.body?.warnings as string[] | null) ?? []) process.stderr.write(`WARNING! ${w}\n`);
      process.stderr.write(`Success! Data written to: ${shownPath(t, 'metadata')}\n`);
    });

  metadataCommand('patch', 'Change some settings or custom metadata keys of a secret')
    .option('--remove-custom-metadata <key>', 'remove this custom metadata key (repeatable)', (v: string, prev: string[] = []) => [...prev, v])
    .action(async (path: string, opts: Record<string, string | string[] | boolean | undefined>, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = await secretTarget(client, path, opts.mount as string | undefined);
      const res = await client.request('PATCH', apiPath(t, 'metadata'), await metadataBody(opts as never), { headers: { 'Content-Type': 'application/merge-patch+json' } });
      for (const w of (res.body?.warnings as string[] | null) ?? []) process.stderr.write(`WARNING! ${w}\n`);
      process.stderr.write(`Success! Data written to: ${shownPath(t, 'metadata')}\n`);
    });

  metadata
    .command('delete')
    .description('Delete a secret entirely: all versions and its metadata')
    .argument('<path>', 'secret path')
    .addOption(mountOpt())
    .action(async (path: string, opts: { mount?: string }, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = await secretTarget(client, path, opts.mount);
      await client.request('DELETE', apiPath(t, 'metadata'));
      process.stderr.write(`Success! Data deleted (if it existed) at: ${shownPath(t, 'metadata')}\n`);
    });
}
