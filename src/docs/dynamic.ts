/**
 * Which arguments and option values complete dynamically, and from where. The shell scripts call the
 * hidden `keyhold __complete SOURCE -- WORDS...`, which asks the daemon with LIST (src/docs/complete.ts).
 */

import { KEY_TYPES } from '../engines/transit/keyring/key-types.js';
import { DESTINATION_TYPE_IDS } from '../sync/types.js';

/** Where completion candidates come from. */
export type Source =
  | 'transit-keys'
  | 'kv-paths'
  | 'mounts'
  | 'transit-mounts'
  | 'kv-mounts'
  | 'sync-destinations'
  | 'sync-types'
  | 'policies'
  | 'audit-devices'
  | 'help-topics'
  | 'files';

/** A rule: commands starting with `command` (words), for argument `arg` or option `option` (long flag). */
export interface DynamicRule {
  command: string;
  arg?: string;
  option?: string;
  /** Where candidates come from; `words` means the fixed list in `words`. */
  source: Source | 'words';
  words?: readonly string[];
}

/** Sources that ask the daemon (the rest are answered locally). */
export const DAEMON_SOURCES: ReadonlySet<Source> = new Set([
  'transit-keys',
  'kv-paths',
  'mounts',
  'transit-mounts',
  'kv-mounts',
  'sync-destinations',
  'policies',
  'audit-devices',
]);

/** Destination types of secret sync (the sync module's table), completed without asking the daemon. */
export const SYNC_TYPES: readonly string[] = DESTINATION_TYPE_IDS;

/** First matching rule wins; `command: ''` matches every command. */
export const DYNAMIC_RULES: readonly DynamicRule[] = [
  { command: 'transit', option: '--mount', source: 'transit-mounts' },
  {
    command: 'transit keys export',
    arg: 'kind',
    source: 'words',
    words: ['encryption-key', 'signing-key', 'hmac-key', 'public-key', 'certificate-chain'],
  },
  { command: 'transit datakey', arg: 'type', source: 'words', words: ['plaintext', 'wrapped'] },
  {
    command: 'transit hash',
    arg: 'algorithm',
    source: 'words',
    words: ['sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'],
  },
  { command: 'transit', option: '--encoding', source: 'words', words: ['base64', 'hex'] },
  {
    command: 'transit',
    option: '--hash-algorithm',
    source: 'words',
    words: [
      'sha1',
      'sha2-224',
      'sha2-256',
      'sha2-384',
      'sha2-512',
      'sha3-224',
      'sha3-256',
      'sha3-384',
      'sha3-512',
      'none',
    ],
  },
  { command: 'transit', option: '--signature-algorithm', source: 'words', words: ['pss', 'pkcs1v15'] },
  { command: 'transit', option: '--marshaling-algorithm', source: 'words', words: ['asn1', 'jws'] },
  { command: 'transit', option: '--padding-scheme', source: 'words', words: ['oaep', 'pkcs1v15'] },
  {
    command: 'transit',
    option: '--type',
    source: 'words',
    words: Object.keys(KEY_TYPES)
      .filter((t) => KEY_TYPES[t as keyof typeof KEY_TYPES].kind !== 'managed')
      .sort(),
  },
  { command: 'transit', arg: 'name', source: 'transit-keys' },
  { command: 'transit', arg: 'key', source: 'transit-keys' },
  { command: 'transit', arg: 'source', source: 'transit-keys' },
  { command: 'transit', arg: 'destination', source: 'transit-keys' },
  { command: 'kv', option: '--mount', source: 'kv-mounts' },
  { command: 'kv', arg: 'path', source: 'kv-paths' },
  { command: 'sync', option: '--mount', source: 'kv-mounts' },
  { command: 'sync', option: '--secret', source: 'kv-paths' },
  { command: 'sync', option: '--secret-name', source: 'kv-paths' },
  { command: 'sync', arg: 'type', source: 'sync-types' },
  { command: 'sync', option: '--type', source: 'sync-types' },
  { command: 'sync', option: '--name', source: 'sync-destinations' },
  { command: 'sync', arg: 'name', source: 'sync-destinations' },
  { command: 'sync', arg: 'destination', source: 'sync-destinations' },
  { command: 'policy', arg: 'name', source: 'policies' },
  { command: 'token create', option: '--policy', source: 'policies' },
  { command: 'secrets disable', arg: 'path', source: 'mounts' },
  { command: 'audit disable', arg: 'path', source: 'audit-devices' },
  { command: 'path-help', arg: 'path', source: 'mounts' },
  { command: 'read', arg: 'path', source: 'mounts' },
  { command: 'write', arg: 'path', source: 'mounts' },
  { command: 'list', arg: 'path', source: 'mounts' },
  { command: 'delete', arg: 'path', source: 'mounts' },
  { command: 'help', arg: 'topic', source: 'help-topics' },
  { command: 'policy write', arg: 'file', source: 'files' },
  { command: '', option: '--file', source: 'files' },
  { command: '', option: '--output', source: 'files' },
  { command: '', option: '--config', source: 'files' },
  { command: '', option: '--tls-cert', source: 'files' },
  { command: '', option: '--tls-key', source: 'files' },
  { command: '', option: '--storage-path', source: 'files' },
  { command: '', option: '--socket', source: 'files' },
];

function under(path: string[], command: string): boolean {
  if (!command) return true;
  const words = command.split(' ');
  return words.every((w, i) => path[i] === w);
}

/** The rule completing argument `arg` of the command at `path`, if any. */
export function argRule(path: string[], arg: string): DynamicRule | undefined {
  return DYNAMIC_RULES.find((r) => r.arg === arg && under(path, r.command));
}

/** The rule completing the value of option `long` of the command at `path`, if any. */
export function optionRule(path: string[], long: string): DynamicRule | undefined {
  return DYNAMIC_RULES.find((r) => r.option === long && under(path, r.command));
}

/** The source completing argument `arg` of the command at `path`, if any. */
export function argSource(path: string[], arg: string): Source | 'words' | undefined {
  return argRule(path, arg)?.source;
}

/** The source completing the value of option `long` of the command at `path`, if any. */
export function optionSource(path: string[], long: string): Source | 'words' | undefined {
  return optionRule(path, long)?.source;
}
