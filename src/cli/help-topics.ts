/**
 * Facts about the CLI as a whole (exit codes, environment, output formats), in tables read by
 * `keyhold help TOPIC`, the man pages and the README.
 */

/** A term and what it means. */
export interface Entry {
  term: string;
  text: string;
}

/** A help topic. */
export interface Topic {
  name: string;
  title: string;
  intro: string;
  entries: Entry[];
  outro?: string;
}

/** Exit statuses (src/main.ts exitCodeOf). */
export const EXIT_CODES: Entry[] = [
  { term: '0', text: 'Success. `transit verify` exits 0 only when the signature or HMAC is valid.' },
  {
    term: '1',
    text: 'Local or usage error: unknown command or flag, unreadable file, the daemon cannot be reached, a declined confirmation, or an invalid signature from `transit verify`.',
  },
  {
    term: '2',
    text: 'The daemon answered with an error (HTTP 4xx or 5xx); its message is printed on stderr. `status` also exits 2 when the daemon is sealed.',
  },
  { term: '130', text: 'Interrupted by Ctrl-C (143: SIGTERM); partial output files are removed.' },
  {
    term: '141',
    text: 'The reader of stdout or stderr went away (`| head`, a closed pager); the status a shell shows for git and gh then.',
  },
];

/** Environment variables the CLI and daemon read (src/cli/client.ts, src/framework/paths.ts, src/cli/tty.ts). */
export const ENVIRONMENT: Entry[] = [
  {
    term: 'KEYHOLD_ADDR',
    text: 'Daemon address: unix:///path/to/keyhold.sock or http(s)://host:port. Overridden by --address.',
  },
  { term: 'VAULT_ADDR', text: 'Used when KEYHOLD_ADDR is unset, so scripts written for the vault CLI work unchanged.' },
  {
    term: 'KEYHOLD_TOKEN',
    text: 'Token sent as X-Vault-Token. Overridden by --token; when neither is set the token saved by `keyhold login` is used.',
  },
  { term: 'VAULT_TOKEN', text: 'Used when KEYHOLD_TOKEN is unset.' },
  {
    term: 'KEYHOLD_SKIP_VERIFY, VAULT_SKIP_VERIFY',
    text: 'When "true", do not verify the TLS certificate of an https:// address (testing only).',
  },
  {
    term: 'KEYHOLD_HOME',
    text: 'One directory for everything: storage in $KEYHOLD_HOME/data, the socket in $KEYHOLD_HOME/run, the saved token in $KEYHOLD_HOME/token.',
  },
  { term: 'XDG_DATA_HOME', text: 'Storage defaults to $XDG_DATA_HOME/keyhold/data (~/.local/share/keyhold/data).' },
  { term: 'XDG_RUNTIME_DIR', text: 'The socket defaults to $XDG_RUNTIME_DIR/keyhold/keyhold.sock.' },
  {
    term: 'XDG_CONFIG_HOME',
    text: '`keyhold login` saves the token to $XDG_CONFIG_HOME/keyhold/token (~/.config/keyhold/token), mode 0600.',
  },
  {
    term: 'NO_COLOR',
    text: 'When set (to anything), no colours, progress bars or spinners. They are also off when stderr or stdout is not a terminal, and when TERM=dumb.',
  },
];

/** Output formats (src/cli/output.ts). */
export const FORMATS: Entry[] = [
  { term: 'table', text: 'Default. Key/value table like the vault CLI; lists print one item per line.' },
  {
    term: 'json',
    text: 'The response data as indented JSON; read, write, token create/lookup/renew, unwrap and login print the whole response as the vault CLI does (request_id, data, auth, wrap_info, warnings, ...), so jq -r .data.ciphertext and .auth.client_token work.',
  },
  { term: 'yaml', text: 'The same as YAML.' },
  { term: 'raw', text: 'Strings as they are, other values as compact JSON, without a trailing newline.' },
  {
    term: '--field NAME',
    text: 'Print only one field of the response, raw and without a newline, ready for $(...) in scripts. Fields of a login answer (token, token_accessor, token_policies, ...) and of a wrapped one (wrapping_token) are found too, as in the vault CLI. Dotted names reach into objects: --field keys.1.',
  },
];

/** Topics of `keyhold help TOPIC`. */
export const TOPICS: Topic[] = [
  {
    name: 'exit-codes',
    title: 'Exit status',
    intro:
      'keyhold exits with one of three statuses so scripts can tell a mistake of their own from an answer of the daemon, and like other Unix tools when a pipe closes or Ctrl-C stops it:',
    entries: EXIT_CODES,
  },
  {
    name: 'environment',
    title: 'Environment',
    intro: 'Flags win over the environment; the environment wins over defaults.',
    entries: ENVIRONMENT,
  },
  {
    name: 'formats',
    title: 'Output formats',
    intro: 'Data goes to stdout and diagnostics to stderr. Choose the format with --format:',
    entries: FORMATS,
    outro: 'Secrets are never taken from argv: give them on stdin (-) or from a file (@file).',
  },
];

/** A topic rendered as plain text for the terminal. */
export function renderTopic(t: Topic): string {
  const w = Math.min(24, Math.max(...t.entries.map((e) => e.term.length)) + 2);
  const lines = [t.title, '', t.intro, ''];
  for (const e of t.entries) {
    if (e.term.length + 2 > w) lines.push(`  ${e.term}`, `  ${' '.repeat(w)}${e.text}`);
    else lines.push(`  ${e.term.padEnd(w)}${e.text}`);
  }
  if (t.outro) lines.push('', t.outro);
  return lines.join('\n') + '\n';
}
