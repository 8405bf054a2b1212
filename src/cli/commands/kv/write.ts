/** What put and patch share: secret data from pairs or a JSON object, and writing a new version. */
import { flag, type FlagSpec, type Invocation } from '../../command.js';
import { LocalError, ServerError } from '../../errors.js';
import { dataOf, emit, kvSection, pathSection, warn } from './render.js';
import { apiPath, shownPath, type Target } from './target.js';

/** --mount of every kv command. */
export const MOUNT: FlagSpec = flag(
  '--mount <path>',
  'KV mount; then PATH is relative to it (default: resolved from PATH)',
);

/** The [data...] argument of put and patch. */
export const DATA_HELP = 'key=value, key=@file, key=- (stdin); or one - / @file.json holding a JSON object';

/** Secret data from `k=v k=@file k=-` pairs, or a whole JSON object from `-` (stdin) or `@file.json`. */
export async function secretData(inv: Invocation, pairs: string[]): Promise<Record<string, unknown>> {
  if (pairs.length === 0)
    throw new LocalError('must supply data: key=value pairs, or - / @file.json with a JSON object');
  if (pairs.length === 1 && (pairs[0] === '-' || (pairs[0]!.startsWith('@') && !pairs[0]!.includes('=')))) {
    const text = await inv.valueOf(pairs[0]!);
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch {
      throw new LocalError('expected a JSON object on stdin or in the file');
    }
    if (!v || typeof v !== 'object' || Array.isArray(v))
      throw new LocalError('expected a JSON object on stdin or in the file');
    return v as Record<string, unknown>;
  }
  return inv.parsePairs(pairs);
}

/** Write a new version (POST) or merge into the current one (PATCH); prints the version's metadata. */
export async function writeVersion(
  inv: Invocation,
  t: Target,
  method: 'POST' | 'PATCH',
  body: Record<string, unknown>,
): Promise<void> {
  const headers = method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : undefined;
  const res = await inv.client.request(method, apiPath(t, 'data'), body, {
    allowStatus: method === 'PATCH' ? [404] : [],
    headers,
  });
  if (res.status === 404) {
    if (res.body?.data)
      throw new ServerError(
        404,
        [
          `the current version of ${shownPath(t, 'data')} is deleted or destroyed; undelete it or write a new version with kv put`,
        ],
        res.body,
      );
    throw new ServerError(404, [`no secret at ${shownPath(t, 'data')}; create it with kv put`], res.body);
  }
  warn(inv, res);
  const meta = dataOf(res);
  await emit(
    inv,
    res.body,
    meta,
    () => `${pathSection('Secret Path', shownPath(t, 'data'))}\n${kvSection('Metadata', meta)}`,
  );
}
