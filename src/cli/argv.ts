/**
 * Command-line words before the parser sees them: Vault's single-dash long flags and the
 * `--version N` of subcommands. The one place where argv is rewritten (main.ts applies both).
 */

/**
 * Vault's CLI takes long flags with one dash (Go's flag package: `vault operator init -key-shares=5`,
 * `vault login -method=approle`, `vault token create -orphan -period=24h`). Any word of two or more
 * letters after one dash, before a `--`, becomes `--word...`; single-letter flags (`-f`, `-y`, `-v`)
 * and values (`jwt=-`, `-`) are left alone.
 */
export function vaultStyleFlags(argv: string[]): string[] {
  const out: string[] = [];
  let rest = false;
  for (const a of argv) {
    if (a === '--') rest = true;
    out.push(!rest && /^-[A-Za-z][\w-]+(=.*)?$/s.test(a) ? `-${a}` : a);
  }
  return out;
}

/**
 * The global `-v/--version` flag would swallow a subcommand's own `--version N` (commander reads
 * global options anywhere). After the first word, `--version N` is therefore passed on as
 * `--version=N`, which only an option taking a value accepts (`kv get`, `secrets enable`).
 */
export function joinVersionValues(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i]!;
    if (a === '--') {
      // Everything after -- belongs to another program (keyhold run -- COMMAND ARGS).
      out.push(...argv.slice(i));
      break;
    }
    // The vault CLI's single-dash `-wrap-ttl=60s` / `-wrap-ttl 60s` is accepted as `--wrap-ttl`.
    if (a === '-wrap-ttl' || a.startsWith('-wrap-ttl=')) a = '-' + a;
    const next = argv[i + 1];
    if (
      a === '--version' &&
      i > 0 &&
      next !== undefined &&
      !next.startsWith('-') &&
      argv.slice(0, i).some((w) => !w.startsWith('-'))
    ) {
      out.push(`--version=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/** Both rewrites, in the order main.ts applies them. */
export function normalizeArgv(argv: string[]): string[] {
  return joinVersionValues(vaultStyleFlags(argv));
}

/** Global options that take a value in the next word (`--format json`). */
const GLOBAL_VALUE_FLAGS = new Set(['--address', '--token', '--format', '--field', '--wrap-ttl']);

/** The first command word of a (normalized) command line, skipping global options; undefined if none. */
export function commandWord(argv: string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return undefined;
    if (GLOBAL_VALUE_FLAGS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}
