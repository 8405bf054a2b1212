/**
 * The `vault` face's command list: keyhold's commands (src/cli/commands/index.ts), with the ones whose
 * vault CLI behaviour differs replaced (same words), and the vault CLI's commands keyhold's face does
 * not have added. Each file keeps the one command shape (src/cli/command.ts).
 */
import { group, isGroup, type Entry } from '../../command.js';
import { entriesFor, loadAll, NOUNS } from '../../commands/nouns.js';
import { server } from './server/server.js';
import { status } from './status/status.js';
import { init } from './operator/init.js';
import { unseal } from './operator/unseal.js';
import { enable as secretsEnable } from './secrets/enable.js';
import { tune as secretsTune } from './secrets/tune.js';
import { enable as auditEnable } from './audit/enable.js';
import { renew as tokenRenew } from './token/renew.js';
import { capabilities as tokenCapabilities } from './token/capabilities.js';
import { printToken } from './print/token.js';
import { rollback as kvRollback } from './kv/rollback.js';
import { enableVersioning as kvEnableVersioning } from './kv/enable-versioning.js';
import { lookup as leaseLookup } from './lease/lookup.js';
import { renew as leaseRenew } from './lease/renew.js';
import { revoke as leaseRevoke } from './lease/revoke.js';
import { version } from './version/version.js';
import { versionHistory } from './version/history.js';
import { members as operatorMembers } from './operator/members.js';
import { login } from './login/login.js';
import { patch } from './path/patch.js';
import { move as secretsMove } from './secrets/move.js';
import { move as authMove } from './auth/move.js';

/** Replacements and additions, in the order they appear in `vault --help` after keyhold's. */
export const VAULT_COMMANDS: readonly Entry[] = [
  server,
  status,
  init,
  unseal,
  operatorMembers,
  login,
  secretsEnable,
  secretsTune,
  secretsMove,
  authMove,
  patch,
  auditEnable,
  tokenRenew,
  tokenCapabilities,
  kvRollback,
  kvEnableVersioning,
  group('lease', 'Look up, renew and revoke leases (keyhold issues none)'),
  leaseLookup,
  leaseRenew,
  leaseRevoke,
  group('print', 'Print values the CLI uses'),
  printToken,
  version,
  versionHistory,
];

const key = (e: Entry) => e.words.join(' ');

/** keyhold's entries with the vault face's replacements in place and its additions after them. */
export function vaultEntries(keyhold: readonly Entry[], vault: readonly Entry[] = VAULT_COMMANDS): Entry[] {
  const byWords = new Map(vault.map((e) => [key(e), e]));
  const out = keyhold.map((e) => (isGroup(e) ? e : (byWords.get(key(e)) ?? e)));
  const have = new Set(out.map(key));
  for (const e of vault) if (!have.has(key(e))) out.push(e);
  return out;
}

/** The vault face's entries for a command line starting with `word` (all of them for help or an unknown word). */
export async function vaultEntriesFor(word: string | undefined): Promise<Entry[]> {
  const keyholdNoun = word !== undefined && NOUNS.some((n) => n.words.includes(word));
  const vaultNoun = word !== undefined && VAULT_COMMANDS.some((e) => e.words[0] === word);
  if (keyholdNoun || vaultNoun)
    return vaultEntries(
      keyholdNoun ? await entriesFor(word) : [],
      VAULT_COMMANDS.filter((e) => e.words[0] === word),
    );
  return vaultEntries(await loadAll());
}
