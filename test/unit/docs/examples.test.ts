import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../../src/cli/program.js';
import { describeCommand, flatten } from '../../../src/docs/cli-model.js';
import { applyExamples, EXAMPLES, examplesOf, ownExamples } from '../../../src/cli/examples.js';

function helpOf(cmd: Command): string {
  let out = '';
  cmd.configureOutput({ writeOut: (s) => (out += s), writeErr: (s) => (out += s) });
  cmd.outputHelp();
  return out;
}

function find(root: Command, words: string[]): Command {
  return words.reduce((c, w) => c.commands.find((x) => x.name() === w)!, root);
}

describe('examples in --help', () => {
  it('every command of the real program shows at least one example in --help', () => {
    const program = buildProgram();
    const leaves = flatten(describeCommand(program)).filter((c) => c.path.length && !c.subcommands.length);
    expect(leaves.length).toBeGreaterThan(20);
    const missing = leaves
      .filter((c) => !/\nExamples:\n\s+\$ .*\bkeyhold /.test(helpOf(find(program, c.path))))
      .map((c) => c.path.join(' '));
    expect(missing).toEqual([]);
  });

  it('every example runs keyhold with the command it documents', () => {
    const program = buildProgram();
    for (const c of flatten(describeCommand(program))) {
      for (const e of c.examples) {
        const words = e.split(/\s+/);
        const at = words.indexOf('keyhold');
        expect(at, e).toBeGreaterThanOrEqual(0);
        // The command's words appear after `keyhold`, in order (global options may come first).
        let i = at;
        for (const w of c.path) {
          i = words.indexOf(w, i + 1);
          expect(i, `${e} should run keyhold ${c.path.join(' ')}`).toBeGreaterThan(at);
        }
      }
    }
  });

  it("keeps a command's own examples and does not add the table's twice", () => {
    const p = new Command('keyhold');
    p.command('status').description('s').addHelpText('after', '\nExamples:\n  $ keyhold status --own');
    p.command('completion').description('c');
    applyExamples(p);
    const status = helpOf(find(p, ['status']));
    expect(status.match(/Examples:/g)).toHaveLength(1);
    expect(status).toContain('$ keyhold status --own');
    expect(status).not.toContain(EXAMPLES.status![1]);
    expect(helpOf(find(p, ['completion']))).toContain(`$ ${EXAMPLES.completion![0]}`);
  });

  it('reads own examples from help text and route hints; falls back to the table, then a usage line', () => {
    const p = new Command('keyhold');
    const own = p.command('a').addHelpText('after', 'Examples:\n  $ keyhold a one\n  $ keyhold a two');
    const table = p.command('status');
    const none = p.command('zzz').argument('<key-name>').argument('[opt]');
    expect(ownExamples(own)).toEqual(['keyhold a one', 'keyhold a two']);
    expect(examplesOf(table, ['status'])).toEqual([...EXAMPLES.status!]);
    expect(examplesOf(none, ['zzz'])).toEqual(['keyhold zzz KEY_NAME']);
  });
});
