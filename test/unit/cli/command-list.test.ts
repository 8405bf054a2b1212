import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../../src/cli/commands/index.js';
import { isGroup, type CommandSpec } from '../../../src/cli/command.js';
import { buildProgram } from '../../../src/cli/program.js';
import { commandModel, listModel } from '../../../src/docs/generate.js';
import { flatten, type CommandDoc } from '../../../src/docs/cli-model.js';
import { attributeName } from '../../../src/cli/route-flags.js';

const commands = COMMANDS.filter((e): e is CommandSpec => !isGroup(e));

/** A model without what only the list knows (stdin). */
function withoutStdin(d: CommandDoc): CommandDoc {
  const { stdin: _stdin, ...rest } = d;
  return { ...rest, subcommands: d.subcommands.map(withoutStdin) };
}

describe('the command list', () => {
  it('names every command once, each with a summary and a run', () => {
    const words = COMMANDS.map((e) => (isGroup(e) ? 'group ' : '') + e.words.join(' '));
    expect(new Set(words).size).toBe(words.length);
    expect(commands.length).toBeGreaterThan(90);
    for (const c of commands) {
      expect(c.summary, c.words.join(' ')).not.toBe('');
      expect(typeof c.run).toBe('function');
    }
  });

  it('is what the parser is made of: the model read from the list equals the model read from the built program', () => {
    expect(withoutStdin(listModel())).toEqual(commandModel(buildProgram()));
  });

  it('documents what a command reads from stdin', () => {
    const encrypt = flatten(listModel()).find((c) => c.path.join(' ') === 'transit encrypt')!;
    expect(encrypt.stdin).toMatch(/plaintext/);
  });

  it('derives flags from route fields under the field’s own name', () => {
    const encrypt = commands.find((c) => c.words.join(' ') === 'transit encrypt')!;
    const derived = (encrypt.flags ?? []).filter((f) => f.field);
    expect(derived.map((f) => f.field)).toEqual([
      'context',
      'associated_data',
      'key_version',
      'nonce',
      'padding_scheme',
      'type',
    ]);
    for (const f of derived) expect(f.flags.startsWith(`--${f.field!.replace(/_/g, '-')} `)).toBe(true);
    expect(attributeName('key_version')).toBe('keyVersion');
  });
});

describe('loading the list by first word', () => {
  it('holds the same entries in the same order as the full list', async () => {
    const { loadAll, NOUNS } = await import('../../../src/cli/commands/nouns.js');
    const all = await loadAll();
    expect(all.length).toBe(COMMANDS.length);
    all.forEach((e, i) => expect(e, e.words.join(' ')).toBe(COMMANDS[i]));
    // Every top-level word is reachable through its noun, and no word is claimed twice.
    const firstWords = [...new Set(COMMANDS.map((e) => e.words[0]!))].filter((w) => w !== 'help');
    const claimed = NOUNS.flatMap((n) => n.words);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect([...claimed].sort()).toEqual([...firstWords].sort());
    // (help is loaded with the docs commands but answers only with the whole list loaded.)
    for (const n of NOUNS)
      for (const e of await n.load()) if (e.words[0] !== 'help') expect(n.words).toContain(e.words[0]);
  });

  it('finds the first command word after global options and their values', async () => {
    const { commandWord } = await import('../../../src/cli/argv.js');
    expect(commandWord(['--format', 'json', '--field=x', 'kv', 'get', 'a'])).toBe('kv');
    expect(commandWord(['--address', 'unix:///s', '--token', 't', 'transit', 'encrypt'])).toBe('transit');
    expect(commandWord(['--help'])).toBeUndefined();
    expect(commandWord(['--', 'kv'])).toBeUndefined();
  });
});

describe('confirmations', () => {
  it('every route whose cli hint says confirm has a command that asks first', async () => {
    const { DEV_MOUNTS, mountedRoutes } = await import('../../../src/docs/catalog.js');
    const asked = new Set(commands.filter((c) => c.confirm).map((c) => c.words.join(' ')));
    const hinted = mountedRoutes(DEV_MOUNTS)
      .flatMap((m) => m.routes)
      .filter((r) => r.cli?.confirm)
      .map((r) => r.cli!.command);
    expect(hinted.length).toBeGreaterThan(0);
    for (const h of hinted) expect(asked.has(h), h).toBe(true);
  });
});
