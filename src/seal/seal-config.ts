/**
 * `seal "TYPE" { ... }` stanzas of the server config -> the seals a daemon runs with.
 * The server config hands them over as `{ type, params }` (one, or a list of two for a migration,
 * the old one with `disabled = "true"`), as Vault's configutil does [vault src internalshared/configutil/kms.go].
 * Environment variables win over the stanza where Vault's wrappers say so (docs/seal.md).
 */
import type { Logger } from '../framework/context.js';
import { parseBool } from '../framework/fields.js';
import { TransitSeal, type TransitSealSettings } from './transit-seal.js';
import type { ConfiguredSeals, SealWrapper } from './wrapper.js';

/** One seal stanza as the server config exposes it. */
export interface SealStanza {
  type: string;
  params: Record<string, unknown>;
}

/** Seal types keyhold runs (Vault also has awskms, gcpckms, azurekeyvault, ocikms, alicloudkms). */
export const SEAL_TYPES = ['transit', 'pkcs11'] as const;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Normalise the config's `seal` value: `{type, params}`, Vault's JSON form `{"transit": {...}}`, or a
 * list of either. Returns an error sentence for the config loader, or the stanzas.
 */
export function normalizeSealConfig(v: unknown): SealStanza[] | string {
  const list = Array.isArray(v) ? v : [v];
  const out: SealStanza[] = [];
  for (const item of list) {
    if (!isObject(item))
      return 'must be {"type": "transit"|"pkcs11", "params": {...}} or a list of two for a migration';
    if (typeof item.type === 'string') {
      const extra = Object.keys(item).filter((k) => k !== 'type' && k !== 'params');
      if (extra.length) return `unknown key "${extra[0]}" (allowed: type, params)`;
      if (item.params !== undefined && !isObject(item.params)) return 'params must be an object';
      out.push({ type: item.type, params: (item.params as Record<string, unknown>) ?? {} });
    } else {
      const keys = Object.keys(item);
      if (keys.length !== 1 || !isObject(item[keys[0]!]))
        return 'must be {"type": "transit"|"pkcs11", "params": {...}}';
      out.push({ type: keys[0]!, params: item[keys[0]!] as Record<string, unknown> });
    }
  }
  return checkStanzas(out) ?? out;
}

/** Whether a stanza is marked `disabled` (the seal being migrated away from). */
export function isDisabled(s: SealStanza): boolean {
  const v = s.params.disabled;
  if (v === undefined) return false;
  try {
    return parseBool('disabled', typeof v === 'number' ? String(v) : v);
  } catch {
    return false;
  }
}

function checkStanzas(list: SealStanza[]): string | null {
  for (const s of list) {
    if (!(SEAL_TYPES as readonly string[]).includes(s.type))
      return `type "${s.type}" is not supported (supported: ${SEAL_TYPES.join(', ')})`;
    if (s.params.disabled !== undefined) {
      try {
        parseBool('disabled', typeof s.params.disabled === 'number' ? String(s.params.disabled) : s.params.disabled);
      } catch {
        return `"${s.type}": disabled must be a boolean`;
      }
    }
  }
  if (list.length > 2) return 'at most two seals (the one in use and the one being migrated away from)';
  if (list.filter((s) => !isDisabled(s)).length > 1)
    return 'only one seal may be enabled; mark the old one disabled = "true" to migrate';
  if (list.filter(isDisabled).length > 1) return 'only one seal may be disabled';
  return null;
}

/** The stanzas after `VAULT_SEAL_TYPE` (Vault: a seal of that type from the environment when the config has none). */
export function effectiveStanzas(stanzas: SealStanza[] | undefined, env: NodeJS.ProcessEnv): SealStanza[] {
  if (stanzas?.length) return stanzas;
  const t = env.VAULT_SEAL_TYPE;
  if (t && t !== 'shamir') return [{ type: t, params: {} }];
  return [];
}

/** First non-empty string among environment values and the stanza's value. */
export function pick(...vals: Array<unknown>): string {
  for (const v of vals) if (typeof v === 'string' && v !== '') return v;
  for (const v of vals) if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
}

/** First non-empty value among `vals` as a boolean (false when none); throws naming `name`. */
export function pickBool(name: string, ...vals: unknown[]): boolean {
  const v = pick(...vals);
  if (v === '') return false;
  try {
    return parseBool(name, v);
  } catch {
    throw new Error(`${name} must be a boolean, got "${v}"`);
  }
}

/** Resolve the transit stanza with Vault's environment precedence; throws naming the missing parameter. */
export function transitSettings(p: Record<string, unknown>, env: NodeJS.ProcessEnv): TransitSealSettings {
  const address =
    pick(env.TRANSIT_WRAPPER_ADDR, env.VAULT_TRANSIT_SEAL_ADDR, p.address, env.VAULT_ADDR) || 'https://127.0.0.1:8200';
  const token = pick(env.TRANSIT_WRAPPER_TOKEN, env.VAULT_TRANSIT_SEAL_TOKEN, p.token, env.VAULT_TOKEN);
  const keyName = pick(env.TRANSIT_WRAPPER_KEY_NAME, env.VAULT_TRANSIT_SEAL_KEY_NAME, p.key_name);
  const mountPath = pick(env.TRANSIT_WRAPPER_MOUNT_PATH, env.VAULT_TRANSIT_SEAL_MOUNT_PATH, p.mount_path);
  if (!keyName) throw new Error('key_name is required');
  if (!mountPath) throw new Error('mount_path is required');
  if (!token) throw new Error('token is required (or VAULT_TRANSIT_SEAL_TOKEN / VAULT_TOKEN)');
  if (!/^(https?|unix):\/\//.test(address))
    throw new Error(`address must be http(s)://host:port or unix:///path, got "${address}"`);
  return {
    address: address.replace(/\/+$/, ''),
    token,
    keyName,
    mountPath: mountPath.replace(/^\/+|\/+$/g, ''),
    namespace: pick(env.VAULT_NAMESPACE, p.namespace),
    disableRenewal: pickBool(
      'disable_renewal',
      env.TRANSIT_WRAPPER_DISABLE_RENEWAL,
      env.VAULT_TRANSIT_SEAL_DISABLE_RENEWAL,
      p.disable_renewal,
    ),
    keyIdPrefix: pick(p.key_id_prefix),
    tls: {
      caCert: pick(p.tls_ca_cert, env.VAULT_CACERT) || undefined,
      clientCert: pick(p.tls_client_cert, env.VAULT_CLIENT_CERT) || undefined,
      clientKey: pick(p.tls_client_key, env.VAULT_CLIENT_KEY) || undefined,
      serverName: pick(p.tls_server_name, env.VAULT_TLS_SERVER_NAME) || undefined,
      skipVerify: pickBool('tls_skip_verify', p.tls_skip_verify, env.VAULT_SKIP_VERIFY),
    },
  };
}

/** Build the seals of a server config. Errors say `seal "TYPE": ...` (the daemon stops with that line). */
export async function buildSeals(
  stanzas: SealStanza[] | undefined,
  env: NodeJS.ProcessEnv,
  logger: Logger,
): Promise<ConfiguredSeals> {
  const list = effectiveStanzas(stanzas, env);
  const why = checkStanzas(list);
  if (why) throw new Error(`seal: ${why}`);
  const out: ConfiguredSeals = { active: null, disabled: null };
  for (const s of list) {
    let w: SealWrapper;
    try {
      if (s.type === 'transit') w = new TransitSeal(transitSettings(s.params, env), logger);
      else if (s.type === 'pkcs11') {
        // Loaded only for a daemon with this seal (the PKCS#11 provider starts a worker thread).
        const { Pkcs11Seal, pkcs11Settings } = await import('./pkcs11-seal.js');
        w = new Pkcs11Seal(pkcs11Settings(s.params, env), logger);
      } else throw new Error('unsupported seal type');
    } catch (e) {
      throw new Error(`seal "${s.type}": ${(e as Error).message}`);
    }
    if (isDisabled(s)) out.disabled = w;
    else out.active = w;
  }
  return out;
}
