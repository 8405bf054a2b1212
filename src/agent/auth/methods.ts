/**
 * Auto-auth methods: what each sends to log in (Vault Agent's `method "approle" | "jwt" |
 * "token_file" | "cert"`). A method reads its credentials from files at each login (CI runners
 * rotate them) and keeps the last value it read when a file was removed after reading.
 */
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import type { MethodConfig } from '../config.js';
import { Keys } from '../config-blocks.js';
import type { Upstream } from '../upstream.js';

/** What a login needs: a write to `path` with `body`, or (token_file) a token used as it is. */
export type LoginRequest =
  | { kind: 'login'; path: string; body: Record<string, unknown>; upstream?: Upstream }
  | { kind: 'token'; token: string };

export interface AuthMethod {
  readonly type: string;
  /** The request of the next login; throws when a credential is missing. */
  prepare(up: Upstream): Promise<LoginRequest>;
}

function readTrimmed(path: string, what: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${what} ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  const v = text.trim();
  return v === '' ? undefined : v;
}

function remove(path: string, followSymlinks: boolean): void {
  try {
    rmSync(followSymlinks ? realpathSync(path) : path, { force: true });
  } catch {
    /* already gone */
  }
}

class AppRole implements AuthMethod {
  readonly type = 'approle';
  private roleId?: string;
  private secretId?: string;
  private readonly roleIdPath: string;
  private readonly secretIdPath?: string;
  private readonly removeSecretId: boolean;
  private readonly wrappingPath?: string;
  constructor(private readonly m: MethodConfig) {
    const k = new Keys(m.config, `${m.where}.config`);
    this.roleIdPath = k.str('role_id_file_path', true);
    this.secretIdPath = k.str('secret_id_file_path');
    this.removeSecretId = k.bool('remove_secret_id_file_after_reading', true);
    this.wrappingPath = k.str('secret_id_response_wrapping_path')?.replace(/^\/+|\/+$/g, '');
    k.done();
  }
  async prepare(up: Upstream): Promise<LoginRequest> {
    this.roleId = readTrimmed(this.roleIdPath, 'role ID file') ?? this.roleId;
    if (!this.roleId) throw new Error(`no role ID in ${this.roleIdPath}`);
    if (this.secretIdPath) {
      const read = readTrimmed(this.secretIdPath, 'secret ID file');
      if (read !== undefined) {
        this.secretId = this.wrappingPath ? await this.unwrap(up, read) : read;
        if (this.removeSecretId) remove(this.secretIdPath, false);
      }
      if (!this.secretId) throw new Error(`no secret ID in ${this.secretIdPath}`);
    }
    return {
      kind: 'login',
      path: `${this.m.mountPath}/login`,
      body: { role_id: this.roleId, ...(this.secretId ? { secret_id: this.secretId } : {}) },
    };
  }
  /** The secret ID file holds a wrapping token: check where it was created, then unwrap it. */
  private async unwrap(up: Upstream, wrapping: string): Promise<string> {
    const look = await up.json('POST', 'sys/wrapping/lookup', { body: { token: wrapping } });
    const created = String(look.body?.data?.creation_path ?? '').replace(/^\/+|\/+$/g, '');
    if (created !== this.wrappingPath)
      throw new Error(
        `the secret ID's wrapping token was created at "${created}", not at secret_id_response_wrapping_path "${this.wrappingPath}"`,
      );
    const r = await up.json('POST', 'sys/wrapping/unwrap', { token: wrapping });
    const id = r.body?.data?.secret_id;
    if (typeof id !== 'string' || !id) throw new Error('the unwrapped secret ID response has no secret_id');
    return id;
  }
}

class Jwt implements AuthMethod {
  readonly type = 'jwt';
  private jwt?: string;
  private readonly path: string;
  private readonly role: string;
  private readonly removeAfter: boolean;
  private readonly followSymlinks: boolean;
  constructor(private readonly m: MethodConfig) {
    const k = new Keys(m.config, `${m.where}.config`);
    this.path = k.str('path', true);
    this.role = k.str('role', true);
    this.removeAfter = k.bool('remove_jwt_after_reading', true);
    this.followSymlinks = k.bool('remove_jwt_follows_symlinks', false);
    k.accept('jwt_read_period');
    k.done();
  }
  async prepare(): Promise<LoginRequest> {
    // Re-read at each login: CI runners and Kubernetes rotate the file.
    const read = readTrimmed(this.path, 'JWT file');
    if (read !== undefined) {
      this.jwt = read;
      if (this.removeAfter) remove(this.path, this.followSymlinks);
    }
    if (!this.jwt) throw new Error(`no JWT in ${this.path}`);
    return { kind: 'login', path: `${this.m.mountPath}/login`, body: { role: this.role, jwt: this.jwt } };
  }
}

class TokenFile implements AuthMethod {
  readonly type = 'token_file';
  private token?: string;
  private readonly path: string;
  constructor(m: MethodConfig) {
    const k = new Keys(m.config, `${m.where}.config`);
    this.path = k.str('token_file_path', true);
    k.done();
  }
  async prepare(): Promise<LoginRequest> {
    this.token = readTrimmed(this.path, 'token file') ?? this.token;
    if (!this.token) throw new Error(`no token in ${this.path}`);
    return { kind: 'token', token: this.token };
  }
}

class Cert implements AuthMethod {
  readonly type = 'cert';
  private readonly name?: string;
  private readonly files: { ca?: string; cert?: string; key?: string };
  private readonly reload: boolean;
  private loaded?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  constructor(private readonly m: MethodConfig) {
    const k = new Keys(m.config, `${m.where}.config`);
    this.name = k.str('name');
    this.files = { ca: k.str('ca_cert'), cert: k.str('client_cert'), key: k.str('client_key') };
    this.reload = k.bool('reload', false);
    k.done();
    if (Boolean(this.files.cert) !== Boolean(this.files.key))
      throw new Error(`${m.where}.config: client_cert and client_key go together`);
  }
  async prepare(up: Upstream): Promise<LoginRequest> {
    // Without its own TLS files the method logs in with the vault stanza's (Vault Agent does the same).
    if (!this.files.cert && !this.files.ca)
      return { kind: 'login', path: `${this.m.mountPath}/login`, body: this.body(), upstream: up };
    // As Vault Agent: the files are read once, or at each login with `reload = true` (short-lived,
    // renewed certificates). A file that cannot be read fails this login, and the next one tries again.
    if (this.reload || !this.loaded) {
      const read = (p: string | undefined, key: string) => {
        if (!p) return undefined;
        try {
          return readFileSync(p);
        } catch (e) {
          throw new Error(
            `cannot read ${this.m.where}.config.${key} ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
          );
        }
      };
      this.loaded = {
        ca: read(this.files.ca, 'ca_cert'),
        cert: read(this.files.cert, 'client_cert'),
        key: read(this.files.key, 'client_key'),
      };
    }
    const { cert, key, ca } = this.loaded;
    const origin = this.files.cert ? { setting: 'auto_auth cert client_cert', file: this.files.cert } : undefined;
    return {
      kind: 'login',
      path: `${this.m.mountPath}/login`,
      body: this.body(),
      upstream: up.withClientCert(cert, key, ca, origin),
    };
  }
  private body(): Record<string, unknown> {
    return this.name ? { name: this.name } : {};
  }
}

/** The method of an `auto_auth.method` stanza; its config is checked here (unknown keys refused). */
export function authMethod(m: MethodConfig): AuthMethod {
  switch (m.type) {
    case 'approle':
      return new AppRole(m);
    case 'jwt':
      return new Jwt(m);
    case 'token_file':
      return new TokenFile(m);
    case 'cert':
      return new Cert(m);
  }
}
