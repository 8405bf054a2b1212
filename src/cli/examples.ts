/**
 * Examples for `--help`, man pages and the command reference: one table, keyed by command words.
 * A command's own examples (from `addHelpText` or a route's `cli.examples`) win over the table; commands
 * in neither get a synthesized usage line so every command shows at least one example.
 */
import type { EventEmitter } from 'node:events';
import type { Command } from 'commander';

/** Curated examples by command path (`transit keys create`). */
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  unwrap: [
    'keyhold unwrap @token.txt',
    'echo "$WRAPPING_TOKEN" | keyhold unwrap -',
    'VAULT_TOKEN="$WRAPPING_TOKEN" keyhold unwrap',
  ],
  // daemon and session
  server: ['keyhold server --dev', 'keyhold server --storage-path /var/lib/keyhold --listen 127.0.0.1:8200'],
  status: ['keyhold status', 'keyhold status --format json'],
  login: ['keyhold login < token.txt', 'echo "$KEYHOLD_TOKEN" | keyhold login'],
  'operator init': ['keyhold operator init', 'keyhold operator init --no-keychain --format json > init.json'],
  'operator unseal': ['keyhold operator unseal < recovery-key.txt'],
  'operator seal': ['keyhold operator seal --yes'],
  'operator seal-status': ['keyhold operator seal-status'],
  // generic paths
  read: ['keyhold read sys/mounts', 'keyhold read transit/keys/app --format json'],
  write: ['keyhold write transit/keys/app type=ed25519', 'keyhold write sys/policies/acl/app policy=@app.hcl'],
  list: ['keyhold list transit/keys', 'keyhold list secret/metadata/'],
  delete: ['keyhold delete sys/policies/acl/app'],
  // tokens and policies
  'token create': [
    'keyhold token create --policy transit-user --ttl 1h',
    'keyhold token create --policy ci --field token',
  ],
  'token lookup': ['keyhold token lookup', 'keyhold token lookup --accessor 6d0a1b2c'],
  'token revoke': ['keyhold token revoke --self', 'keyhold token revoke - < old-token.txt'],
  'policy write': ['keyhold policy write transit-user policy.hcl', 'keyhold policy write app - < app.hcl'],
  'policy read': ['keyhold policy read transit-user'],
  'policy list': ['keyhold policy list'],
  'policy delete': ['keyhold policy delete transit-user'],
  'secrets enable': ['keyhold secrets enable transit', 'keyhold secrets enable --path=team kv-v2'],
  'secrets disable': ['keyhold secrets disable payments --yes'],
  'secrets list': ['keyhold secrets list', 'keyhold secrets list --format json'],
  // transit keys
  'transit keys create': [
    'keyhold transit keys create app',
    'keyhold transit keys create release --type ed25519',
    'keyhold transit keys create mac --type hmac --key-size 64',
  ],
  'transit keys list': ['keyhold transit keys list', 'keyhold transit keys list --mount payments'],
  'transit keys read': ['keyhold transit keys read app', 'keyhold transit keys read release --field keys'],
  'transit keys delete': ['keyhold transit keys delete old-app'],
  'transit keys config': [
    'keyhold transit keys config app --min-decryption-version 2',
    'keyhold transit keys config app --auto-rotate-period 720h',
  ],
  'transit keys rotate': ['keyhold transit keys rotate app'],
  'transit keys trim': ['keyhold transit keys trim app --min-available-version 3'],
  'transit keys export': [
    'keyhold transit keys export encryption-key app',
    'keyhold transit keys export public-key release --format json',
  ],
  'transit keys wrapping-key': ['keyhold transit keys wrapping-key > wrapping-key.pem'],
  'transit keys byok-export': ['keyhold transit keys byok-export partner-wrap app latest --output app.byok.json'],
  'transit keys backup': ['keyhold transit keys backup app > app.backup'],
  'transit keys restore': ['keyhold transit keys restore app < app.backup'],
  'transit import': ['keyhold transit import legacy --file key.pem --type rsa-2048'],
  'transit import-version': ['keyhold transit import-version legacy --file new-key.pem'],
  // transit data
  'transit encrypt': [
    'printf "hello" | keyhold transit encrypt app --field ciphertext',
    'keyhold transit encrypt app --envelope --file backup.tar --output backup.tar.khev',
  ],
  'transit decrypt': [
    'keyhold transit decrypt app "vault:v1:..." > plain.txt',
    'keyhold transit decrypt app --envelope --file backup.tar.khev --output backup.tar',
  ],
  'transit rewrap': ['keyhold transit rewrap app "vault:v1:..." --field ciphertext'],
  'transit datakey': [
    'keyhold transit datakey wrapped app --field ciphertext',
    'keyhold transit datakey plaintext app --bits 512 --format json',
  ],
  'transit random': [
    'keyhold transit random 32',
    'keyhold transit random 16 --encoding hex',
    'keyhold transit random 64 --binary > seed.bin',
  ],
  'transit hash': [
    'keyhold transit hash sha2-512 < file.bin',
    'keyhold transit hash --file release.tar.gz --encoding base64',
  ],
  'transit hmac': [
    'keyhold transit hmac app --file payload.json --field hmac',
    'printf data | keyhold transit hmac app --algorithm sha2-512',
  ],
  'transit sign': ['keyhold transit sign release --file app.tar.gz --field signature > app.tar.gz.sig'],
  'transit verify': [
    'keyhold transit verify release --signature @app.tar.gz.sig --file app.tar.gz',
    'keyhold transit verify app --hmac "$MAC" --file payload.json',
  ],
  'transit cache-config': ['keyhold transit cache-config --size 500'],
  'transit config-keys': ['keyhold transit config-keys --disable-upsert true'],
  // kv
  'kv put': ['keyhold kv put secret/app/db user=app password=@password.txt', 'keyhold kv put secret/app/api token=-'],
  'kv get': ['keyhold kv get secret/app/db', 'keyhold kv get --version 2 --field password secret/app/db'],
  'kv list': ['keyhold kv list secret/app'],
  'kv patch': ['keyhold kv patch secret/app/db password=@new-password.txt'],
  'kv delete': ['keyhold kv delete secret/app/db', 'keyhold kv delete --versions 1,2 secret/app/db'],
  'kv undelete': ['keyhold kv undelete --versions 2 secret/app/db'],
  'kv destroy': ['keyhold kv destroy --versions 1 secret/app/db'],
  'kv metadata get': ['keyhold kv metadata get secret/app/db'],
  'kv metadata put': ['keyhold kv metadata put secret/app/db --max-versions 5'],
  'kv metadata patch': ['keyhold kv metadata patch secret/app/db --custom-metadata owner=payments'],
  'kv metadata delete': ['keyhold kv metadata delete secret/app/db'],
  // sync
  'sync dest create': [
    'keyhold sync dest create repohost my-repo --repository-owner acme --repository-name app --access-token @gh-token.txt',
  ],
  'sync dest list': ['keyhold sync dest list', 'keyhold sync dest list repohost'],
  'sync dest read': ['keyhold sync dest read repohost my-repo'],
  'sync dest update': ['keyhold sync dest update repohost my-repo --granularity secret-key'],
  'sync dest delete': [
    'keyhold sync dest delete repohost my-repo',
    'keyhold sync dest delete repohost old-repo --purge',
  ],
  'sync assoc set': ['keyhold sync assoc set repohost my-repo --mount secret --secret app/db'],
  'sync assoc remove': ['keyhold sync assoc remove repohost my-repo --mount secret --secret app/db'],
  'sync assoc list': ['keyhold sync assoc list repohost my-repo'],
  'sync status': ['keyhold sync status', 'keyhold sync status --type repohost --name my-repo --failed'],
  'sync config': ['keyhold sync config --disabled false'],
  // audit
  'audit enable': ['keyhold audit enable file file_path=/var/log/keyhold/audit.log'],
  'audit disable': ['keyhold audit disable file'],
  'audit list': ['keyhold audit list'],
  // docs
  completion: [
    'keyhold completion bash > /etc/bash_completion.d/keyhold',
    'keyhold completion zsh > "${fpath[1]}/_keyhold"',
    'keyhold completion fish > ~/.config/fish/completions/keyhold.fish',
  ],
  openapi: ['keyhold openapi > openapi.json', 'keyhold openapi --offline --format yaml'],
  'path-help': ['keyhold path-help transit/keys/app', 'keyhold path-help secret/data/app/db'],
  help: ['keyhold help exit-codes', 'keyhold help transit encrypt'],
  version: ['keyhold version', 'keyhold version --format json'],
};

/** While probing a command's own help text, the table's listener stays quiet. */
let probing = false;

/** Examples a command declares itself (help text after `Examples:`, lines `$ keyhold ...`). */
export function ownExamples(cmd: Command): string[] {
  let text = '';
  probing = true;
  try {
    (cmd as unknown as EventEmitter).emit('afterHelp', {
      error: false,
      command: cmd,
      write: (s: string) => (text += s),
    });
  } finally {
    probing = false;
  }
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*\$\s+(.+?)\s*$/.exec(line);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** `keyhold WORDS ARG...` with the required arguments in capitals, for commands nobody wrote examples for. */
export function synthesizedUsage(path: readonly string[], requiredArgs: readonly string[]): string {
  return ['keyhold', ...path, ...requiredArgs.map((a) => a.toUpperCase().replace(/-/g, '_'))].join(' ');
}

/** A usage line built from the command's arguments, for commands nobody wrote examples for. */
export function synthesizedExample(cmd: Command, path: string[]): string {
  return synthesizedUsage(
    path,
    cmd.registeredArguments.filter((a) => a.required).map((a) => a.name()),
  );
}

/** The examples shown for a command: its own, else the table's, else a synthesized usage line. */
export function examplesOf(cmd: Command, path: string[]): string[] {
  const own = ownExamples(cmd);
  if (own.length) return own;
  const table = EXAMPLES[path.join(' ')];
  if (table?.length) return [...table];
  return cmd.commands.length ? [] : [synthesizedExample(cmd, path)];
}

/** Add table examples to the `--help` of every leaf command that has none of its own. */
export function applyExamples(program: Command): void {
  const walk = (cmd: Command, path: string[]): void => {
    for (const sub of cmd.commands) walk(sub, [...path, sub.name()]);
    if (!path.length) return;
    // Evaluated when help is shown, so commands that add their own examples later still win.
    cmd.addHelpText('after', () => {
      if (probing || ownExamples(cmd).length) return '';
      const ex = EXAMPLES[path.join(' ')] ?? (cmd.commands.length ? [] : [synthesizedExample(cmd, path)]);
      return ex.length ? '\nExamples:\n' + ex.map((e) => `  $ ${e}`).join('\n') : '';
    });
  };
  walk(program, []);
}
