/**
 * Test support: the fenced code blocks of a Markdown page, for the docs test that runs every command
 * block of the README and docs/ against a dev daemon.
 *
 * Convention: a ```sh block is a command sequence and is run (bash -e, without pipefail, one working folder and one dev
 * daemon per page, blocks in page order). One that cannot run there (a real cloud account, a daemon
 * in the foreground, a global install) starts with the visible line `# not run by the docs test:
 * <reason>`. Other shell-like languages (bash, shell, console, zsh) must carry that line too, so no
 * command sequence escapes the test by its fence.
 */

/** First line of a command block that the docs test does not run, followed by the reason. */
export const DOC_SKIP_MARKER = '# not run by the docs test:';

/** One fenced block of a page. */
export interface DocBlock {
  /** 1-based line of the opening fence. */
  line: number;
  /** Info string's first word (`sh`, `json`, ...), '' when none. */
  lang: string;
  code: string;
  /** A command sequence (sh, bash, shell, console, zsh). */
  command: boolean;
  /** Run by the docs test (an `sh` block without the skip marker). */
  run: boolean;
  /** The reason given after the skip marker, if any. */
  skipReason?: string;
}

const COMMAND_LANGS = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

/** Every fenced block (``` or ~~~) of `markdown`, in order. */
export function docBlocks(markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const out: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]!);
    if (!open) continue;
    const fence = open[2]!;
    const lang = open[3]!.toLowerCase();
    let j = i + 1;
    while (j < lines.length && !lines[j]!.trimStart().startsWith(fence)) j++;
    const code = lines.slice(i + 1, j).join('\n');
    const command = COMMAND_LANGS.has(lang);
    const first = code.trimStart().split('\n')[0] ?? '';
    const skipReason = first.startsWith(DOC_SKIP_MARKER) ? first.slice(DOC_SKIP_MARKER.length).trim() : undefined;
    out.push({
      line: i + 1,
      lang,
      code,
      command,
      run: lang === 'sh' && skipReason === undefined,
      ...(skipReason !== undefined ? { skipReason } : {}),
    });
    i = j;
  }
  return out;
}
