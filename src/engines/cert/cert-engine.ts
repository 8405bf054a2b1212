/**
 * TLS certificate login (hashicorp/vault builtin/credential/cert: path_certs.go, path_crls.go,
 * path_config.go, path_login.go): roles ("certs") hold trusted CA or leaf certificates and
 * constraints on the client's certificate; CRLs revoke by serial number; the login reads the
 * certificate of the request's own TLS connection (mTLS on a TCP listener). OCSP is not supported
 * (refused with 400 at role write). No HTTP in here.
 */
import type { X509Certificate } from 'node:crypto';
import type { EngineEnv, IssuedLogin, TlsPeer } from '../../framework/context.js';
import { invalid } from '../../framework/errors.js';
import { KeyedLock } from '../../framework/keyed-lock.js';
import { getJSON, putJSON } from '../../storage/backend.js';
import { defaultTokenParams, loginAuthOf, parseTokenParams, type TokenParams } from '../auth-common/token-params.js';
import { crlSerials, integerDecimal } from './cert-der.js';
import { type CertConstraints, leafFacts, meetsConstraints } from './cert-match.js';
import { allowsClientAuth, parsePemBundle, pathTo, presentedChain } from './client-chain.js';

/** A stored role (Vault calls them "certs"). */
export interface CertRole extends TokenParams, CertConstraints {
  name: string;
  certificate: string;
  display_name: string;
  allowed_metadata_extensions: string[];
  legacy_policies?: string[];
}

/** A stored CRL: the revoked serial numbers in decimal, as Vault keys them. */
export interface CrlEntry {
  name: string;
  serials: Record<string, Record<string, never>>;
}

/** Mount settings (path_config.go). */
export interface CertConfig {
  disable_binding: boolean;
  enable_identity_alias_metadata: boolean;
  ocsp_cache_size: number;
  role_cache_size: number;
  enable_metadata_on_failures: boolean;
}

const DEFAULT_CONFIG: CertConfig = {
  disable_binding: false,
  enable_identity_alias_metadata: false,
  ocsp_cache_size: 100,
  role_cache_size: 200,
  enable_metadata_on_failures: false,
};

/** Vault's answer when no trusted path exists (or no certificate came). */
export const NO_TRUST = 'invalid certificate or no client certificate supplied';
/** Vault's answer when a trusted path exists but no role's constraints match. */
export const NO_MATCH = 'no chain matching all constraints could be found for this login certificate';

const CONSTRAINT_FIELDS = [
  'allowed_names',
  'allowed_common_names',
  'allowed_dns_sans',
  'allowed_email_sans',
  'allowed_uri_sans',
  'allowed_organizational_units',
  'required_extensions',
  'allowed_metadata_extensions',
] as const;

/** Role names: letters, digits, `_`, `-`, `.` (path_certs.go uses framework.GenericNameRegex). */
export function certName(raw: string): string {
  if (!/^\w(?:[\w.-]*\w)?$/.test(raw)) throw invalid('name', 'must be letters, digits, "_", "-" or "."');
  return raw.toLowerCase();
}

/** A certificate's serial number in decimal. */
function serialOf(c: X509Certificate): string {
  const hex = c.serialNumber;
  return integerDecimal(Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex'));
}

/** One cert mount. */
export class CertEngine {
  private readonly locks = new KeyedLock();
  /** Parsed certificates of each role, by role name and PEM (a role write replaces them). */
  private readonly parsed = new Map<string, { pem: string; certs: X509Certificate[] }>();

  constructor(readonly env: EngineEnv) {}

  /** Nothing to stop (EngineLifecycle). */
  async close(): Promise<void> {}

  /** Another node changed a role: drop its parsed certificates. */
  invalidate(key: string): void {
    if (key.startsWith('cert/')) this.parsed.delete(key.slice(5));
  }

  role(name: string): Promise<CertRole | null> {
    return getJSON<CertRole>(this.env.storage, `cert/${name}`);
  }

  async listRoles(): Promise<string[]> {
    return (await this.env.storage.list('cert/')).filter((n) => !n.endsWith('/')).sort();
  }

  /** Create or update a role (pathCertWrite); returns warnings. */
  async writeRole(name: string, input: Record<string, unknown>): Promise<string[]> {
    for (const k of ['ocsp_enabled', 'ocsp_fail_open', 'ocsp_query_all_servers'])
      if (input[k] === true) throw invalid(k, 'OCSP is not supported by keyhold; revoke with a CRL (crls/:name)');
    for (const k of ['ocsp_ca_certificates', 'ocsp_servers_override']) {
      const v = input[k];
      if (v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0))
        throw invalid(k, 'OCSP is not supported by keyhold; revoke with a CRL (crls/:name)');
    }
    return this.locks.run(name, async () => {
      const existing = await this.role(name);
      const role: CertRole = existing ?? {
        name,
        certificate: '',
        display_name: name,
        allowed_names: [],
        allowed_common_names: [],
        allowed_dns_sans: [],
        allowed_email_sans: [],
        allowed_uri_sans: [],
        allowed_organizational_units: [],
        required_extensions: [],
        allowed_metadata_extensions: [],
        ...defaultTokenParams(),
      };
      const warnings = parseTokenParams(role, input, this.env.mount);
      if (input.policies !== undefined && input.token_policies === undefined)
        role.legacy_policies = role.token_policies;
      if (typeof input.certificate === 'string') {
        let certs: X509Certificate[];
        try {
          certs = parsePemBundle(input.certificate);
        } catch {
          certs = [];
        }
        if (certs.length === 0) throw invalid('certificate', 'failed to parse certificate (expected PEM)');
        role.certificate = input.certificate;
      }
      if (!role.certificate) throw invalid('must specify certificate');
      if (typeof input.display_name === 'string' && input.display_name !== '') role.display_name = input.display_name;
      for (const k of CONSTRAINT_FIELDS) {
        const v = input[k] as string[] | undefined;
        if (v !== undefined) role[k] = v.map((x) => x.trim()).filter(Boolean);
      }
      for (const r of role.required_extensions)
        if (!/^\d+(\.\d+)+:/.test(r)) throw invalid('required_extensions', `"${r}" must be "<oid>:<value>"`);
      await putJSON(this.env.storage, `cert/${name}`, role);
      this.parsed.delete(name);
      return warnings;
    });
  }

  async deleteRole(name: string): Promise<void> {
    await this.env.storage.delete(`cert/${name}`);
    this.parsed.delete(name);
  }

  private certsOf(role: CertRole): X509Certificate[] {
    const p = this.parsed.get(role.name);
    if (p && p.pem === role.certificate) return p.certs;
    const certs = parsePemBundle(role.certificate);
    this.parsed.set(role.name, { pem: role.certificate, certs });
    return certs;
  }

  /** Store a CRL (path_crls.go); 400 when it does not parse. */
  async writeCrl(name: string, pem: string | undefined): Promise<void> {
    if (!pem) throw invalid('missing crl');
    let list: string[];
    try {
      list = crlSerials(pem.trim());
    } catch {
      throw invalid('crl', 'failed to parse CRL (expected PEM "X509 CRL")');
    }
    const serials: CrlEntry['serials'] = {};
    for (const s of list) serials[s] = {};
    await putJSON(this.env.storage, `crl/${name}`, { name, serials } satisfies CrlEntry);
  }

  crl(name: string): Promise<CrlEntry | null> {
    return getJSON<CrlEntry>(this.env.storage, `crl/${name}`);
  }

  async listCrls(): Promise<string[]> {
    return (await this.env.storage.list('crl/')).sort();
  }

  async deleteCrl(name: string): Promise<void> {
    await this.env.storage.delete(`crl/${name}`);
  }

  async config(): Promise<CertConfig> {
    return { ...DEFAULT_CONFIG, ...((await getJSON<Partial<CertConfig>>(this.env.storage, 'config')) ?? {}) };
  }

  async writeConfig(input: Partial<CertConfig>): Promise<void> {
    const c = await this.config();
    for (const k of Object.keys(DEFAULT_CONFIG) as (keyof CertConfig)[])
      if (input[k] !== undefined) (c as unknown as Record<string, unknown>)[k] = input[k];
    if (c.ocsp_cache_size < 2) throw invalid('ocsp_cache_size', 'must be at least 2');
    await putJSON(this.env.storage, 'config', c);
  }

  private async revokedSerials(): Promise<Set<string>> {
    const out = new Set<string>();
    for (const n of await this.listCrls()) {
      const c = await this.crl(n);
      if (c) for (const s of Object.keys(c.serials)) out.add(s);
    }
    return out;
  }

  /**
   * Log in with the connection's client certificate (path_login.go): a trusted, unexpired,
   * unrevoked path to a role's certificate, then the role's constraints; the first role (by name)
   * that passes issues the token. Every refusal is a 400 with Vault's text.
   */
  async login(tls: TlsPeer | undefined, name: string | undefined): Promise<IssuedLogin> {
    const chain = presentedChain(tls);
    if (chain.length === 0) throw invalid(NO_TRUST);
    const leaf = chain[0]!;
    if (!allowsClientAuth(leaf)) throw invalid(NO_TRUST);
    const intermediates = chain.slice(1);
    const names = name ? [certName(name)] : await this.listRoles();
    const revoked = await this.revokedSerials();
    const now = this.env.clock.now();
    const facts = leafFacts(leaf);
    let trusted = false;
    for (const n of names) {
      const role = await this.role(n);
      if (!role) continue;
      for (const anchor of this.certsOf(role)) {
        const path = pathTo(leaf, intermediates, anchor, now);
        if (!path || path.some((c) => revoked.has(serialOf(c)))) continue;
        trusted = true;
        if (!meetsConstraints(role, facts)) continue;
        return this.issue(role, facts);
      }
    }
    throw invalid(trusted ? NO_MATCH : NO_TRUST);
  }

  private issue(role: CertRole, f: ReturnType<typeof leafFacts>): Promise<IssuedLogin> {
    const metadata: Record<string, string> = {
      cert_name: role.name,
      common_name: f.commonName,
      serial_number: f.serialDecimal,
      subject_key_id: f.subjectKeyId,
      authority_key_id: f.authorityKeyId,
    };
    for (const spec of role.allowed_metadata_extensions) {
      const v = f.extensions.get(spec);
      if (v !== undefined) metadata[spec.replace(/\./g, '-')] = v;
    }
    const issue = this.env.core.issueLoginToken;
    if (!issue) throw new Error('token store unavailable');
    return issue.call(
      this.env.core,
      this.env.mount,
      loginAuthOf(role, {
        path: `${this.env.mount.path}login`,
        displayName: role.display_name,
        metadata,
        alias: { name: f.commonName },
        role: role.name,
      }),
    );
  }
}
