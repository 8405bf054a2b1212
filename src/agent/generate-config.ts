/**
 * `keyhold agent generate-config -type=env-template -path=secret/app [-exec="./app arg"] FILE`, as
 * `vault agent generate-config`: reads the KV secrets at the paths (a path ending in `/*` takes every
 * secret under it) and writes an agent configuration with one `env_template` per field, an `exec`
 * stanza and token_file auto-auth. Variable names are the path's last segment and the field,
 * upper-cased and joined with `_` (`secret/team/app` field `password` is `APP_PASSWORD`).
 */
import { existsSync, writeFileSync } from 'node:fs';
import type { Upstream } from './upstream.js';

export interface GenerateOptions {
  type: string;
  paths: string[];
  exec?: string;
  address: string;
  tokenFilePath: string;
}

interface Found {
  mount: string;
  version: number;
  inner: string;
}

async function locate(up: Upstream, token: string, path: string): Promise<Found> {
  const r = await up.json('GET', `sys/internal/ui/mounts/${path}`, { token, allow: [403, 404] });
  const d = r.body?.data;
  if (r.status !== 200 || !d?.path)
    throw new Error(`cannot find the mount of ${path} (${r.status}); is it a KV mount the token may read?`);
  const mount = String(d.path);
  if (d.type !== 'kv') throw new Error(`${path} is not on a KV mount (${mount} is ${d.type})`);
  return {
    mount,
    version: Number(d.options?.version ?? 1) === 2 ? 2 : 1,
    inner: path.slice(mount.length).replace(/^\/+/, ''),
  };
}

/** The last path segment and the field, split on anything but letters and digits, joined with `_`, upper-cased. */
function varName(inner: string, field: string): string {
  const last = inner.split('/').filter(Boolean).pop() ?? '';
  const words = (s: string) => s.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  return [...words(last), ...words(field)].join('_').toUpperCase();
}

async function fields(up: Upstream, token: string, f: Found, inner: string): Promise<string[]> {
  const p = f.version === 2 ? `${f.mount}data/${inner}` : `${f.mount}${inner}`;
  const r = await up.json('GET', p, { token });
  const data = f.version === 2 ? r.body?.data?.data : r.body?.data;
  return Object.keys(data ?? {}).sort();
}

async function listAll(up: Upstream, token: string, f: Found, prefix: string): Promise<string[]> {
  const p = f.version === 2 ? `${f.mount}metadata/${prefix}` : `${f.mount}${prefix}`;
  const r = await up.json('LIST', p, { token, allow: [404] });
  const keys: string[] = r.body?.data?.keys ?? [];
  const out: string[] = [];
  for (const k of keys) {
    if (k.endsWith('/')) out.push(...(await listAll(up, token, f, `${prefix}${k}`)));
    else out.push(`${prefix}${k}`);
  }
  return out;
}

const q = (s: string) => JSON.stringify(s);

/** The configuration text. */
export async function generateConfig(up: Upstream, token: string, o: GenerateOptions): Promise<string> {
  if (o.type !== 'env-template') throw new Error(`-type: only "env-template" is supported, not "${o.type}"`);
  if (o.paths.length === 0)
    throw new Error('-path is required (repeatable; a path may end in /* for every secret below it)');
  const envs: string[] = [];
  for (const raw of o.paths) {
    const path = raw.replace(/^\/+/, '');
    const star = path.endsWith('/*');
    const base = star ? path.slice(0, -2) : path;
    const f = await locate(up, token, base);
    const inners = star ? await listAll(up, token, f, f.inner ? `${f.inner.replace(/\/+$/, '')}/` : '') : [f.inner];
    for (const inner of inners) {
      const read = f.version === 2 ? `${f.mount}data/${inner}` : `${f.mount}${inner}`;
      const access = f.version === 2 ? '.Data.data' : '.Data';
      for (const field of await fields(up, token, f, inner)) {
        const contents = `{{ with secret ${q(read)} }}{{ ${access}.${field} }}{{ end }}`;
        envs.push(
          `env_template ${q(varName(inner, field))} {\n  contents             = ${q(contents)}\n  error_on_missing_key = true\n}`,
        );
      }
    }
  }
  const cmd = (o.exec ?? 'env').split(/\s+/).filter(Boolean);
  return (
    [
      `auto_auth {\n\n  method {\n    type = "token_file"\n\n    config {\n      token_file_path = ${q(o.tokenFilePath)}\n    }\n  }\n}`,
      `template_config {\n  static_secret_render_interval = "5m"\n  exit_on_retry_failure         = true\n  max_connections_per_host      = 10\n}`,
      `vault {\n  address = ${q(o.address)}\n}`,
      envs.join('\n'),
      `exec {\n  command                   = [${cmd.map(q).join(', ')}]\n  restart_on_secret_changes = "always"\n  restart_stop_signal       = "SIGTERM"\n}`,
    ].join('\n\n') + '\n'
  );
}

/** Write the configuration to `file`, refusing to overwrite one that exists. */
export function writeConfig(file: string, text: string): void {
  if (existsSync(file)) throw new Error(`${file} already exists; remove it or name another file`);
  writeFileSync(file, text, { mode: 0o644 });
}
