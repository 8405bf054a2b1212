/** The contract every destination type implements: its fields table and its connector. */
import { f, type Fields } from '../../framework/fields.js';
import { invalid } from '../../framework/errors.js';
import type { Logger } from '../../framework/context.js';
import type { DestinationRecord, DestinationType, Granularity } from '../types.js';
import type { HttpClient } from '../http-client.js';
import type { NetworkGuard } from '../network-guard.js';
import type { IdentityTokenSigner } from '../identity-token.js';

/** Talks to one external secret store. Names arrive normalized and checked; values are UTF-8 text. */
export interface Connector {
  /** Create or overwrite the external secret `name`. */
  put(name: string, value: string, signal: AbortSignal, opts?: PutOptions): Promise<void>;
  /** Delete the external secret `name`; an absent secret is success (spec 7.12). */
  remove(name: string, signal: AbortSignal): Promise<void>;
  /** Release sockets and cached tokens. */
  close(): void;
}

/** Hints for a put; connectors that gain nothing from them ignore them. */
export interface PutOptions {
  /**
   * keyhold has no record of having written `name` (first sync of an association, a KV secret
   * synced again after an unsync, or a new name after a template change): it is most likely absent
   * at the provider. Only a hint: the put must still succeed when the name exists.
   */
  fresh?: boolean;
}

/** What a connector is built with. */
export interface ConnectorDeps {
  /** A GitHub App registered under sys/sync/github-apps, or null (repohost with app auth). */
  githubApp?(name: string): Promise<{ app_id: number; private_key: string } | null>;
  http: HttpClient;
  guard: NetworkGuard;
  /** Signs identity tokens for workload identity federation (absent in unit tests without an issuer). */
  identityToken?: IdentityTokenSigner;
  timeoutMs: number;
  now(): number;
  logger: Logger;
}

/** A destination type: fields, rules and connector (design note: facts in tables). */
export interface DestinationTypeDef {
  type: DestinationType;
  /** The real service behind the neutral id. */
  provider: string;
  /** Connection fields (no defaults here: omitted fields keep stored values on update). */
  fields: Fields;
  /** Fields a create must carry. */
  required: string[];
  /** Fields fixed at creation (reference 1.5 `readonlyParams`). */
  immutable: string[];
  /** Values used when a create omits a field. */
  defaults: Record<string, unknown>;
  defaultGranularity: Granularity;
  /** Default `secret_name_template` per granularity (reference 1.6). */
  defaultTemplates: Record<Granularity, string>;
  /** Whether `custom_tags` applies (not for repohost, hosting-project). */
  customTags: boolean;
  /** The provider's limits on tags per secret, checked when the destination is written (issue 19). */
  tagLimits?: TagLimits;
  /** Check and normalize connection values after a create/update merge (400 naming the field). */
  check?(conn: Record<string, unknown>): void;
  /**
   * Called on an update after `check`, with the stored and the new connection (which it may
   * annotate); true when every association must be synced again because of the change.
   */
  onUpdate?(prev: Record<string, unknown>, next: Record<string, unknown>): boolean;
  /** Build the connector of a destination. */
  connect(dest: DestinationRecord, deps: ConnectorDeps): Connector;
}

/** `endpoint_url`: every type may point at another API base (compatible endpoints, enterprise servers, tests). */
export const endpointField = f.string(
  'Replaces the provider API base URL (AWS-compatible endpoints, GitHub Enterprise Server, tests); subject to the networking options',
);

/** Require an absolute http(s) URL in `field` when set. */
export function checkUrlField(conn: Record<string, unknown>, field: string): void {
  const v = conn[field];
  if (v === undefined || v === '') return;
  let u: URL;
  try {
    u = new URL(String(v));
  } catch {
    throw invalid(field, 'must be an absolute http(s) URL');
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw invalid(field, 'must be an absolute http(s) URL');
  if (u.username || u.password) throw invalid(field, 'must not carry credentials');
}

/** Base URL without trailing slash. */
export function baseUrl(value: unknown, fallback: string): string {
  const s = typeof value === 'string' && value !== '' ? value : fallback;
  return s.replace(/\/+$/, '');
}

/** Built-in tag on every synced secret (Vault's IAM examples condition on it), merged with custom tags. */
export function tagsOf(dest: DestinationRecord): Record<string, string> {
  return { 'hashicorp:vault': '', ...dest.options.custom_tags };
}

/** A provider's documented limits on the tags (labels) of one secret. */
export interface TagLimits {
  /** Tags per secret, keyhold's own `hashicorp:vault` tag included. */
  max: number;
  keyLength: number;
  valueLength: number;
  /** Where the limits are documented (cited in the error). */
  source: string;
}

/**
 * Check `custom_tags` against `limits`, counting keyhold's own tag (as pushed: after `normalize`,
 * which may merge keys); throws 400 naming the limit. Without this a destination with too many tags
 * was accepted and every sync to it then failed at the provider.
 */
export function checkTagLimits(
  custom: Record<string, string>,
  limits: TagLimits,
  normalize: (tags: Record<string, string>) => Record<string, string> = (t) => t,
): void {
  const all = normalize({ 'hashicorp:vault': '', ...custom });
  const n = Object.keys(all).length;
  if (n > limits.max) {
    throw invalid(
      'custom_tags',
      `at most ${limits.max - 1} tags: ${limits.source} allows ${limits.max} tags per secret and keyhold adds its own "hashicorp:vault" tag (got ${Object.keys(custom).length} custom tags)`,
    );
  }
  for (const [k, v] of Object.entries(custom)) {
    if (k.length > limits.keyLength)
      throw invalid(
        'custom_tags',
        `tag keys may have at most ${limits.keyLength} characters (${limits.source}); "${k.slice(0, 40)}..." has ${k.length}`,
      );
    if (v.length > limits.valueLength)
      throw invalid(
        'custom_tags',
        `tag values may have at most ${limits.valueLength} characters (${limits.source}); the value of "${k.slice(0, 40)}" has ${v.length}`,
      );
  }
}
