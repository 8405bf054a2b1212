/**
 * Response wrapping (Vault's vault/wrapping.go and the sys/wrapping handlers): a response is replaced
 * by a single-use token whose policy is `response-wrapping`; the original response, serialised as the
 * HTTP body Vault would have sent, lives in that token's cubbyhole (`response`), with the lookup facts
 * beside it (`wrapinfo`). Both are storage records behind the barrier (AES-256-GCM) and disappear with
 * the token: on unwrap, on revocation, at its TTL.
 */
import { invalid } from '../framework/errors.js';
import { getJSON, putJSON, type Storage } from '../storage/backend.js';
import { RESPONSE_WRAPPING_POLICY_NAME } from './policies.js';
import type { TokenEntry, TokenStore } from './tokens.js';

/** Vault's default max lease TTL (768h), the longest a wrapping token may live. */
export const MAX_WRAP_TTL = 768 * 3600;

/** `wrap_info` of a wrapped answer (Vault's HTTPWrapInfo). */
export interface WrapInfo {
  token: string;
  accessor: string;
  ttl: number;
  creation_time: string;
  creation_path: string;
  wrapped_accessor?: string;
}

/** Vault's consts.ErrInvalidWrappingToken. */
const INVALID = 'wrapping token is not valid or does not exist';

/** Parse an `X-Vault-Wrap-TTL` value (duration string or seconds) with Vault's checks and keyhold's cap. */
export function parseWrapTtl(raw: string): number {
  const s = raw.trim();
  if (s.startsWith('-')) throw invalid('requested wrap ttl cannot be negative');
  const m = /^(\d+)$/.exec(s);
  let seconds: number;
  if (m) seconds = Number(m[1]);
  else {
    const re = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/y;
    const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 };
    let pos = 0;
    let total = 0;
    while (pos < s.length) {
      re.lastIndex = pos;
      const mm = re.exec(s);
      if (!mm) break;
      total += Number(mm[1]) * units[mm[2]!]!;
      pos = re.lastIndex;
    }
    if (pos !== s.length || pos === 0)
      throw invalid(`X-Vault-Wrap-TTL: invalid duration "${raw}"; use seconds or a duration such as "5m"`);
    seconds = Math.floor(total);
  }
  if (seconds > MAX_WRAP_TTL)
    throw invalid(`X-Vault-Wrap-TTL: requested wrap ttl ${seconds}s exceeds the maximum of ${MAX_WRAP_TTL}s (768h)`);
  return seconds;
}

/** Where cubbyholes live: one directory per token, named by the token's salted hash. */
export function cubbyholeDir(tokenHash: string): string {
  return `${tokenHash}/`;
}

interface StoredWrapInfo {
  creation_ttl: number;
  creation_time: string;
  creation_path: string;
}

/** Creates, looks up, unwraps and rewraps wrapping tokens. */
export class WrappingService {
  constructor(
    private readonly tokens: TokenStore,
    /** The cubbyhole engine's storage (behind the barrier). */
    private readonly cubbyholes: Storage,
  ) {}

  /**
   * Wrap `responseJson` (the exact HTTP body to hand back on unwrap) into a new single-use token
   * that lives `ttl` seconds. Returns the `wrap_info` to send instead.
   */
  async wrap(responseJson: string, ttl: number, creationPath: string, wrappedAccessor = ''): Promise<WrapInfo> {
    if (!(ttl > 0) || ttl > MAX_WRAP_TTL) throw invalid(`wrap ttl must be between 1s and ${MAX_WRAP_TTL}s`);
    const { id, entry } = await this.tokens.create({
      policies: [RESPONSE_WRAPPING_POLICY_NAME],
      ttl,
      explicit_max_ttl: ttl,
      renewable: false,
      num_uses: 1,
      orphan: true,
      display_name: 'response-wrapping',
    });
    const creationTime = new Date(Math.floor(entry.creation_time * 1000)).toISOString();
    const dir = cubbyholeDir(entry.hash);
    try {
      await putJSON(this.cubbyholes, dir + 'response', { response: responseJson });
      await putJSON(this.cubbyholes, dir + 'wrapinfo', {
        creation_ttl: ttl,
        creation_time: creationTime,
        creation_path: creationPath,
      } satisfies StoredWrapInfo);
    } catch (e) {
      await this.tokens.revokeEntry(entry).catch(() => undefined);
      throw e;
    }
    // Vault's HTTPWrapInfo: wrapped_accessor is omitted when empty.
    const info: WrapInfo = {
      token: id,
      accessor: entry.accessor,
      ttl,
      creation_time: creationTime,
      creation_path: creationPath,
    };
    if (wrappedAccessor) info.wrapped_accessor = wrappedAccessor;
    return info;
  }

  /** The wrapping token's entry, or 400 "wrapping token is not valid or does not exist". */
  private async entryOf(token: string | undefined): Promise<TokenEntry> {
    if (!token) throw invalid(INVALID);
    // A header-borne wrapping token may have spent its one use on this very request.
    const e = await this.tokens.lookup(token, { includeSpent: true });
    if (!e || e.type !== 'service' || e.policies.length !== 1 || e.policies[0] !== RESPONSE_WRAPPING_POLICY_NAME)
      throw invalid(INVALID);
    return e;
  }

  /** Lookup (sys/wrapping/lookup): creation facts, the token stays usable. */
  async lookup(
    token: string | undefined,
  ): Promise<{ creation_ttl: number; creation_time: string; creation_path: string }> {
    const e = await this.entryOf(token);
    const info = await getJSON<StoredWrapInfo>(this.cubbyholes, cubbyholeDir(e.hash) + 'wrapinfo');
    if (!info) throw invalid('wrapping information was nil; wrapping token may be from a previous Vault version');
    return { creation_ttl: info.creation_ttl, creation_time: info.creation_time, creation_path: info.creation_path };
  }

  /**
   * Unwrap: the stored response body, then the token and its cubbyhole are gone. Single use holds
   * under concurrency: the token is taken under its lock on a fresh read (TokenStore.consume), so of
   * any number of simultaneous unwraps exactly one gets the response.
   */
  async unwrap(token: string | undefined): Promise<string> {
    const taken = await this.tokens.consume(await this.entryOf(token), async (e) => {
      const stored = await getJSON<{ response?: unknown }>(this.cubbyholes, cubbyholeDir(e.hash) + 'response');
      if (!stored || typeof stored.response !== 'string') throw invalid('no response found inside the cubbyhole');
      return stored.response;
    });
    if (!taken) throw invalid(INVALID);
    return taken.value;
  }

  /** Rewrap: the same response under a new token with the original TTL and creation path; the old token is revoked. */
  async rewrap(token: string | undefined): Promise<WrapInfo> {
    const taken = await this.tokens.consume(await this.entryOf(token), async (e) => {
      const dir = cubbyholeDir(e.hash);
      const info = await getJSON<StoredWrapInfo>(this.cubbyholes, dir + 'wrapinfo');
      const stored = await getJSON<{ response?: unknown }>(this.cubbyholes, dir + 'response');
      if (!info || !stored || typeof stored.response !== 'string')
        throw invalid('wrapping information was nil; wrapping token may be from a previous Vault version');
      return { response: stored.response, info };
    });
    if (!taken) throw invalid(INVALID);
    return this.wrap(taken.value.response, taken.value.info.creation_ttl, taken.value.info.creation_path);
  }
}
