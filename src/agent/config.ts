/**
 * The agent's configuration: Vault Agent's file format (HCL1 or JSON, one or more files or a
 * directory of them), read into typed settings. Stanzas: `vault`, `auto_auth` (`method`, `sink`),
 * `template_config`, `template`, `exec`, `env_template`, `listener`, `api_proxy`, `cache`, and the
 * top-level `pid_file`, `exit_after_auth`, `log_level`. Unknown keys are refused with the file and
 * stanza named; options Vault accepts that keyhold's agent has no use for are accepted and ignored.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { constants as osConstants } from 'node:os';
import { hclToPlain, parseHcl, HclSyntaxError, type PlainObject, type PlainValue } from '../framework/hcl.js';
import { AgentConfigError, Keys, bodies, isObject, labelled } from './config-blocks.js';

export { AgentConfigError } from './config-blocks.js';

export interface VaultSettings {
  address?: string;
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  tlsSkipVerify: boolean;
  /** Retries of a failed request (Vault's `retry { num_retries }`, default 12). */
  numRetries: number;
}

export type MethodType = 'approle' | 'jwt' | 'token_file' | 'cert';
export interface MethodConfig {
  type: MethodType;
  /** `auth/approle` (no trailing slash). */
  mountPath: string;
  /** Seconds; the login response is wrapped (the sink then gets the wrapping token). */
  wrapTtl?: number;
  minBackoff: number;
  maxBackoff: number;
  exitOnErr: boolean;
  config: PlainObject;
  where: string;
}

export interface SinkConfig {
  path: string;
  mode: number;
  /** Seconds: write a wrapping token of this TTL instead of the token. */
  wrapTtl?: number;
}

export interface TemplateConfig {
  /** Where it came from, for errors: the source file or `template[2]`. */
  name: string;
  source?: string;
  contents?: string;
  destination: string;
  perms?: number;
  command?: string[];
  /** Seconds. */
  commandTimeout: number;
  errorOnMissingKey: boolean;
  leftDelim: string;
  rightDelim: string;
  createDestDirs: boolean;
  backup: boolean;
}

export interface EnvTemplateConfig {
  name: string;
  contents: string;
  errorOnMissingKey: boolean;
}

export interface ExecConfig {
  command: string[];
  restartOnSecretChanges: 'always' | 'never';
  restartStopSignal: NodeJS.Signals;
}

export interface ListenerConfig {
  type: 'unix' | 'tcp';
  address: string;
  socketMode?: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  requireRequestHeader: boolean;
  enableQuit: boolean;
}

export interface AgentConfig {
  pidFile?: string;
  logLevel?: string;
  exitAfterAuth: boolean;
  vault: VaultSettings;
  autoAuth?: { method: MethodConfig; sinks: SinkConfig[] };
  templateConfig: { staticSecretRenderInterval: number; exitOnRetryFailure: boolean };
  templates: TemplateConfig[];
  exec?: ExecConfig;
  envTemplates: EnvTemplateConfig[];
  listeners: ListenerConfig[];
  apiProxy: { useAutoAuthToken: boolean | 'force' };
  cache?: { cacheStaticSecrets: boolean };
}

/** Keys that may occur more than once across files: their blocks add up instead of replacing. */
const ADDITIVE = new Set(['template', 'listener', 'env_template']);

function readOne(file: string): PlainObject {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AgentConfigError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    const v = hclToPlain(parseHcl(text));
    if (!isObject(v)) throw new AgentConfigError(`${file}: not a configuration`);
    return v;
  } catch (e) {
    if (e instanceof HclSyntaxError) throw new AgentConfigError(`${file}: ${e.message}`);
    throw e;
  }
}

/** The files a `-config` names: the file itself, or a directory's `.hcl` and `.json` files in name order. */
function expand(path: string): string[] {
  let st;
  try {
    st = statSync(path);
  } catch (e) {
    throw new AgentConfigError(`cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  if (!st.isDirectory()) return [path];
  return readdirSync(path)
    .filter((n) => n.endsWith('.hcl') || n.endsWith('.json'))
    .sort()
    .map((n) => join(path, n));
}

/** Merge the files' top-level keys: later files win, except blocks that add up (templates, listeners). */
function merge(docs: PlainObject[]): PlainObject {
  const out: PlainObject = {};
  for (const d of docs) {
    for (const [k, v] of Object.entries(d)) {
      if (ADDITIVE.has(k) && out[k] !== undefined) {
        if (k === 'env_template' && isObject(out[k]) && isObject(v)) out[k] = { ...(out[k] as PlainObject), ...v };
        else
          out[k] = [...(Array.isArray(out[k]) ? (out[k] as PlainValue[]) : [out[k]!]), ...(Array.isArray(v) ? v : [v])];
      } else out[k] = v;
    }
  }
  return out;
}

/** Read and check the configuration from one or more `-config` paths. */
export function loadAgentConfig(paths: string[]): AgentConfig {
  if (paths.length === 0)
    throw new AgentConfigError('no configuration: pass -config FILE (a file or a directory; repeatable)');
  const files = paths.flatMap(expand);
  if (files.length === 0) throw new AgentConfigError(`no .hcl or .json file in ${paths.join(', ')}`);
  return parseAgentConfig(merge(files.map(readOne)), files.join(', '));
}

/** Typed settings from a merged plain document (exported for tests). */
export function parseAgentConfig(doc: PlainObject, name: string): AgentConfig {
  const top = new Keys(doc, name);
  const cfg: AgentConfig = {
    pidFile: top.str('pid_file'),
    logLevel: top.str('log_level'),
    exitAfterAuth: top.bool('exit_after_auth', false),
    vault: vaultSettings(top.obj('vault')),
    templateConfig: templateConfig(top.obj('template_config')),
    templates: bodies(doc.template, 'template').map((b, i) => template(b, i)),
    envTemplates: envTemplates(doc.env_template),
    listeners: labelled(doc.listener, 'listener').map((l) => listener(l.label, l.body)),
    apiProxy: { useAutoAuthToken: false },
  };
  top.accept('template', 'env_template', 'listener', 'auto_auth', 'api_proxy', 'cache', 'exec');
  // Accepted for compatibility with Vault Agent configs; keyhold logs to stderr.
  top.accept(
    'log_file',
    'log_format',
    'log_rotate_bytes',
    'log_rotate_duration',
    'log_rotate_max_files',
    'telemetry',
    'disable_idle_connections',
    'disable_keep_alives',
    'disable_mlock',
  );
  top.done();
  if (doc.auto_auth !== undefined) cfg.autoAuth = autoAuth(bodies(doc.auto_auth, 'auto_auth')[0] ?? {});
  if (doc.exec !== undefined) cfg.exec = exec(bodies(doc.exec, 'exec')[0] ?? {});
  if (doc.api_proxy !== undefined) {
    const k = new Keys(bodies(doc.api_proxy, 'api_proxy')[0] ?? {}, 'api_proxy');
    cfg.apiProxy.useAutoAuthToken = k.boolOr('use_auto_auth_token', false, ['force'] as const);
    k.accept('enforce_consistency', 'when_inconsistent');
    k.done();
  }
  if (doc.cache !== undefined) {
    const k = new Keys(bodies(doc.cache, 'cache')[0] ?? {}, 'cache');
    // Vault's older spelling: cache { use_auto_auth_token } sets the proxy's token use.
    if (k.has('use_auto_auth_token') && doc.api_proxy === undefined)
      cfg.apiProxy.useAutoAuthToken = k.boolOr('use_auto_auth_token', false, ['force'] as const);
    k.accept(
      'use_auto_auth_token',
      'disable_caching_dynamic_secrets',
      'static_secret_token_capability_refresh_interval',
      'static_secret_token_capability_refresh_behavior',
    );
    if (k.has('persist'))
      throw new AgentConfigError(
        'cache.persist: persistent caches (Kubernetes only in Vault) are not supported by keyhold agent',
      );
    cfg.cache = { cacheStaticSecrets: k.bool('cache_static_secrets', true) };
    k.done();
  }
  check(cfg);
  return cfg;
}

function check(cfg: AgentConfig): void {
  if (cfg.envTemplates.length && !cfg.exec)
    throw new AgentConfigError('env_template: needs an exec stanza (the rendered variables are for its child)');
  if (cfg.exec && cfg.envTemplates.length === 0) throw new AgentConfigError('exec: needs at least one env_template');
  if (cfg.exitAfterAuth && !cfg.autoAuth) throw new AgentConfigError('exit_after_auth: needs an auto_auth stanza');
  if ((cfg.cache || cfg.apiProxy.useAutoAuthToken) && cfg.listeners.length === 0)
    throw new AgentConfigError('api_proxy/cache: needs at least one listener');
  if (cfg.apiProxy.useAutoAuthToken && !cfg.autoAuth)
    throw new AgentConfigError('api_proxy.use_auto_auth_token: needs an auto_auth stanza');
  if (!cfg.autoAuth && (cfg.templates.length || cfg.exec) && !process.env.VAULT_TOKEN && !process.env.KEYHOLD_TOKEN) {
    throw new AgentConfigError('template/exec: needs an auto_auth stanza (or VAULT_TOKEN in the environment)');
  }
}

function vaultSettings(b: PlainObject | undefined): VaultSettings {
  const k = new Keys(b ?? {}, 'vault');
  const retry = k.obj('retry');
  const r = new Keys(retry ?? {}, 'vault.retry');
  const numRetries = r.int('num_retries') ?? 12;
  r.done();
  const v: VaultSettings = {
    address: k.str('address'),
    caCert: k.str('ca_cert'),
    clientCert: k.str('client_cert'),
    clientKey: k.str('client_key'),
    tlsSkipVerify: k.bool('tls_skip_verify', false),
    numRetries: numRetries < 0 ? 0 : numRetries,
  };
  k.accept('ca_path', 'tls_server_name', 'namespace');
  k.done();
  return v;
}

const METHODS: readonly MethodType[] = ['approle', 'jwt', 'token_file', 'cert'];

function autoAuth(b: PlainObject): { method: MethodConfig; sinks: SinkConfig[] } {
  const k = new Keys(b, 'auto_auth');
  k.accept('method', 'sink');
  k.accept('enable_reauth_on_new_credentials');
  k.done();
  const methods = labelled(b.method, 'auto_auth.method');
  if (methods.length !== 1)
    throw new AgentConfigError(`auto_auth: exactly one method is required (found ${methods.length})`);
  const { label, body } = methods[0]!;
  const where = `auto_auth.method "${label}"`;
  if (!(METHODS as readonly string[]).includes(label))
    throw new AgentConfigError(`${where}: unsupported method (keyhold agent supports ${METHODS.join(', ')})`);
  const m = new Keys(body, where);
  const method: MethodConfig = {
    type: label as MethodType,
    mountPath: (m.str('mount_path') ?? `auth/${label === 'token_file' ? 'token' : label}`).replace(/^\/+|\/+$/g, ''),
    wrapTtl: m.duration('wrap_ttl'),
    minBackoff: m.duration('min_backoff') ?? 1,
    maxBackoff: m.duration('max_backoff') ?? 300,
    exitOnErr: m.bool('exit_on_err', false),
    config: m.obj('config') ?? {},
    where,
  };
  m.accept('namespace');
  m.done();
  if (method.minBackoff <= 0) method.minBackoff = 1;
  if (method.maxBackoff < method.minBackoff) method.maxBackoff = method.minBackoff;
  const sinks = labelled(b.sink, 'auto_auth.sink').map(({ label: t, body: sb }) => sink(t, sb));
  return { method, sinks };
}

function sink(type: string, body: PlainObject): SinkConfig {
  const where = `auto_auth.sink "${type}"`;
  if (type !== 'file') throw new AgentConfigError(`${where}: unsupported sink type (only "file")`);
  const k = new Keys(body, where);
  if (k.has('dh_type') || k.has('dh_path') || k.has('derive_key') || k.has('aad') || k.has('aad_env_var')) {
    throw new AgentConfigError(
      `${where}: dh_type (Diffie-Hellman encrypted sinks) is not supported by keyhold agent; use wrap_ttl (response wrapping) or a plain sink with a private mode`,
    );
  }
  const wrapTtl = k.duration('wrap_ttl');
  const c = new Keys(k.obj('config') ?? {}, `${where}.config`);
  const path = c.str('path', true);
  const mode = c.mode('mode') ?? 0o640;
  c.done();
  k.done();
  return { path, mode, wrapTtl };
}

function templateConfig(b: PlainObject | undefined): AgentConfig['templateConfig'] {
  const k = new Keys(b ?? {}, 'template_config');
  const out = {
    staticSecretRenderInterval: k.duration('static_secret_render_interval') ?? 300,
    exitOnRetryFailure: k.bool('exit_on_retry_failure', false),
  };
  k.accept('max_connections_per_host', 'lease_renewal_threshold');
  k.done();
  if (out.staticSecretRenderInterval <= 0) out.staticSecretRenderInterval = 300;
  return out;
}

function commandOf(k: Keys, key: string): string[] | undefined {
  const v = k.strings(key);
  if (!v || v.length === 0 || (v.length === 1 && v[0]!.trim() === '')) return undefined;
  // One string (or a one-element list) runs in a shell, as consul-template does; a longer list runs directly.
  return v.length === 1 ? ['/bin/sh', '-c', v[0]!] : v;
}

function template(b: PlainObject, i: number): TemplateConfig {
  const where = `template[${i}]`;
  const k = new Keys(b, where);
  const t: TemplateConfig = {
    name: '',
    source: k.str('source'),
    contents: k.str('contents'),
    destination: k.str('destination', true),
    perms: k.mode('perms'),
    command: commandOf(k, 'command'),
    commandTimeout: k.duration('command_timeout') ?? 30,
    errorOnMissingKey: k.bool('error_on_missing_key', false),
    leftDelim: k.str('left_delimiter') ?? '{{',
    rightDelim: k.str('right_delimiter') ?? '}}',
    createDestDirs: k.bool('create_dest_dirs', true),
    backup: k.bool('backup', false),
  };
  const execBlock = k.obj('exec');
  if (execBlock) {
    const e = new Keys(execBlock, `${where}.exec`);
    t.command = commandOf(e, 'command') ?? t.command;
    t.commandTimeout = e.duration('timeout') ?? t.commandTimeout;
    e.done();
  }
  k.accept(
    'wait',
    'sandbox_path',
    'function_denylist',
    'function_blacklist',
    'uid',
    'gid',
    'user',
    'group',
    'map_to_environment_variable',
  );
  k.done();
  if ((t.source === undefined) === (t.contents === undefined))
    throw new AgentConfigError(`${where}: exactly one of source and contents is required`);
  t.name = t.source ?? `${where} (contents)`;
  return t;
}

function envTemplates(v: PlainValue | undefined): EnvTemplateConfig[] {
  const out: EnvTemplateConfig[] = [];
  for (const { label, body } of labelled(v, 'env_template')) {
    const where = `env_template "${label}"`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(label))
      throw new AgentConfigError(`${where}: not a valid environment variable name`);
    const k = new Keys(body, where);
    const contents = k.str('contents', true);
    const errorOnMissingKey = k.bool('error_on_missing_key', false);
    k.done();
    out.push({ name: label, contents, errorOnMissingKey });
  }
  return out;
}

function exec(b: PlainObject): ExecConfig {
  const k = new Keys(b, 'exec');
  const command = k.strings('command');
  if (!command || command.length === 0) throw new AgentConfigError('exec: command is required');
  const restart = k.str('restart_on_secret_changes') ?? 'always';
  if (restart !== 'always' && restart !== 'never')
    throw new AgentConfigError('exec: restart_on_secret_changes must be "always" or "never"');
  const sigName = (k.str('restart_stop_signal') ?? 'SIGTERM').toUpperCase();
  const sig = (sigName.startsWith('SIG') ? sigName : `SIG${sigName}`) as NodeJS.Signals;
  if (!(sig in osConstants.signals)) throw new AgentConfigError(`exec: restart_stop_signal: unknown signal ${sigName}`);
  k.done();
  return { command, restartOnSecretChanges: restart, restartStopSignal: sig };
}

function listener(type: string, body: PlainObject): ListenerConfig {
  const where = `listener "${type}"`;
  if (type !== 'unix' && type !== 'tcp')
    throw new AgentConfigError(`${where}: unsupported listener type (unix or tcp)`);
  const k = new Keys(body, where);
  const l: ListenerConfig = {
    type,
    address: k.str('address', true),
    socketMode: k.mode('socket_mode'),
    tlsCertFile: k.str('tls_cert_file'),
    tlsKeyFile: k.str('tls_key_file'),
    requireRequestHeader: k.bool('require_request_header', false),
    enableQuit: false,
  };
  const tlsDisable = k.bool('tls_disable', false);
  const api = k.obj('agent_api') ?? k.obj('proxy_api');
  if (api) {
    const a = new Keys(api, `${where}.agent_api`);
    l.enableQuit = a.bool('enable_quit', false);
    a.done();
  }
  k.accept(
    'socket_user',
    'socket_group',
    'role',
    'tls_min_version',
    'tls_client_ca_file',
    'tls_require_and_verify_client_cert',
    'tls_disable_client_certs',
  );
  k.done();
  if (type === 'tcp' && !tlsDisable && !(l.tlsCertFile && l.tlsKeyFile))
    throw new AgentConfigError(`${where}: set tls_disable = true, or tls_cert_file and tls_key_file`);
  return l;
}
