/**
 * The command list by first word, each part loaded on demand: a command line loads only the files of
 * its own noun (`keyhold kv get` never loads transit's route tables), which keeps start-up close to
 * Node's own. The order and content are those of index.ts (a unit test holds them equal); root help,
 * `help`, an unknown word or no word at all load everything.
 */
import type { Entry } from '../command.js';

/** First words and the part of the list they load. */
export const NOUNS: ReadonlyArray<{ words: readonly string[]; load: () => Promise<readonly Entry[]> }> = [
  { words: ['server'], load: async () => [(await import('./server/server.js')).server] },
  { words: ['status'], load: async () => [(await import('./status/status.js')).status] },
  { words: ['version'], load: async () => [(await import('./version/version.js')).version] },
  { words: ['operator'], load: async () => (await import('./operator/index.js')).operatorCommands },
  { words: ['read', 'write', 'list', 'delete'], load: async () => (await import('./path/index.js')).pathCommands },
  { words: ['token'], load: async () => (await import('./token/index.js')).tokenCommands },
  { words: ['policy'], load: async () => (await import('./policy/index.js')).policyCommands },
  { words: ['secrets'], load: async () => (await import('./secrets/index.js')).secretsCommands },
  { words: ['login'], load: async () => [(await import('./login/login.js')).login] },
  { words: ['auth'], load: async () => (await import('./auth/index.js')).authCommands },
  { words: ['transit'], load: async () => (await import('./transit/index.js')).transitCommands },
  { words: ['kv'], load: async () => (await import('./kv/index.js')).kvCommands },
  { words: ['sync'], load: async () => (await import('./sync/index.js')).syncCommands },
  { words: ['audit'], load: async () => (await import('./audit/index.js')).auditCommands },
  { words: ['managed-keys'], load: async () => (await import('./managed-keys/index.js')).managedKeysCommands },
  { words: ['run'], load: async () => [(await import('./run/run.js')).run] },
  { words: ['env'], load: async () => [(await import('./run/env.js')).env] },
  { words: ['agent'], load: async () => (await import('./agent/index.js')).agentCommands },
  { words: ['unwrap'], load: async () => [(await import('./unwrap/unwrap.js')).unwrap] },
  // help walks the whole tree; completion and __complete are listed with it.
  {
    words: ['completion', '__complete', 'openapi', 'path-help'],
    load: async () => (await import('./docs/index.js')).docsCommands,
  },
  { words: ['service'], load: async () => (await import('./service/index.js')).serviceCommands },
  { words: ['quota'], load: async () => (await import('./quota/index.js')).quotaCommands },
  { words: ['monitor'], load: async () => [(await import('./monitor/monitor.js')).monitor] },
];

/** Every entry, in the order of index.ts. */
export async function loadAll(): Promise<Entry[]> {
  return (await Promise.all(NOUNS.map((n) => n.load()))).flat();
}

/** The entries a command line starting with `word` needs: its noun's, or all of them. */
export async function entriesFor(word: string | undefined): Promise<Entry[]> {
  const noun = word === undefined ? undefined : NOUNS.find((n) => n.words.includes(word));
  return noun ? [...(await noun.load())] : loadAll();
}
