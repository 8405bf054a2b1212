/**
 * The cubbyhole engine (Vault's builtin/logical/cubbyhole): a private key/value store per token,
 * mounted at `cubbyhole/` by default. A token sees only its own cubbyhole (no policy can open another
 * token's), and the cubbyhole is destroyed with its token. Response wrapping stores the wrapped
 * answer in the wrapping token's cubbyhole (src/auth/wrapping.ts).
 */
import type { EngineModule } from '../../framework/engine.js';
import type { TokenInfo } from '../../framework/context.js';
import { denied, invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor } from '../../framework/route.js';
import { getJSON, putJSON, type Storage } from '../../storage/backend.js';

/** A live cubbyhole mount: storage plus the token -> directory mapping (the token's salted hash). */
export interface Cubbyhole {
  storage: Storage;
  dirOf(token: TokenInfo): string;
  close?(): Promise<void>;
}

const route = routesFor<Cubbyhole>();

function dir(engine: Cubbyhole, token: TokenInfo | null): string {
  // Vault: "client token empty"; every cubbyhole request is authenticated, so this is defence in depth.
  if (!token) throw denied();
  // Vault: batch tokens are not stored, so they have no cubbyhole.
  if (token.batch) throw invalid('cubbyhole operations are only supported by "service" type tokens');
  return engine.dirOf(token);
}

/** Routes of the cubbyhole engine. */
export const cubbyholeRoutes = [
  route({
    path: '(*path)',
    summary: "Read, write, delete or list secrets in the calling token's cubbyhole",
    description: 'Each token has its own cubbyhole; it is destroyed when the token is revoked or expires.',
    fields: { path: f.string('Secret path within the cubbyhole') },
    anyFields: true,
    exists: async ({ engine, token, data }) => {
      if (!data.path) return false;
      return (await engine.storage.get(dir(engine, token) + data.path)) !== null;
    },
    operations: {
      read: async ({ engine, token, data }) => {
        if (!data.path) throw invalid('path', 'missing path');
        const v = await getJSON<Record<string, unknown>>(engine.storage, dir(engine, token) + data.path);
        return v ? { data: v } : undefined;
      },
      update: async ({ engine, token, data, raw, fullPath }) => {
        if (!data.path) throw invalid('path', 'missing path');
        if (fullPath.endsWith('/') || data.path.endsWith('/')) throw invalid("cannot write to a path ending in '/'");
        const body: Record<string, unknown> = {};
        for (const k of Object.keys(raw)) if (k !== 'path') body[k] = raw[k];
        if (Object.keys(body).length === 0) throw invalid('missing data fields');
        await putJSON(engine.storage, dir(engine, token) + data.path, body);
      },
      delete: async ({ engine, token, data }) => {
        if (!data.path) throw invalid('path', 'missing path');
        await engine.storage.delete(dir(engine, token) + data.path);
      },
      list: async ({ engine, token, data }) => {
        const prefix = data.path ? (data.path.endsWith('/') ? data.path : data.path + '/') : '';
        const keys = await engine.storage.list(dir(engine, token) + prefix);
        return { data: { keys: keys.sort() } };
      },
    },
  }),
];

/** The cubbyhole engine module (mounted internally at `cubbyhole/`; `dirOf` is supplied by the core). */
export function cubbyholeEngine(dirOf: (token: TokenInfo) => string): EngineModule<Cubbyhole> {
  return {
    type: 'cubbyhole',
    accessorPrefix: 'cubbyhole',
    description: 'per-token private secret storage',
    routes: cubbyholeRoutes,
    async create(env) {
      return { storage: env.storage, dirOf };
    },
  };
}

/** Delete every record of one cubbyhole directory (the token is gone). */
export async function destroyCubbyhole(storage: Storage, directory: string): Promise<void> {
  for (const name of await storage.list(directory)) {
    if (name.endsWith('/')) await destroyCubbyhole(storage, directory + name);
    else await storage.delete(directory + name);
  }
}
