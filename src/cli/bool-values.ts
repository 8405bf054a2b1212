/**
 * Boolean flags given a value, as Go's flag package allows (`vault token create -orphan=true
 * -no-default-policy=false`): commander knows only bare switches, so, once the program is built, a
 * boolean flag's `--name=true` becomes `--name` and `--name=false` becomes its negation (`--no-name`
 * when the command has one) or is dropped (the switch stays off). Other words pass unchanged.
 */
import type { Command, Option } from 'commander';

const TRUE = /^(1|t|true)$/i;
const FALSE = /^(0|f|false)$/i;

/** The options in force for the command a line reaches (its own first, then its parents'). */
function optionsAlong(program: Command, argv: readonly string[]): Option[] {
  const opts: Option[] = [...program.options];
  let cur = program;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if (a.startsWith('-')) {
      const o = opts.find((x) => x.long === a || x.short === a);
      if (o && (o.required || o.optional) && !a.includes('=')) i++;
      continue;
    }
    const sub = cur.commands.find((c) => c.name() === a || c.aliases().includes(a));
    if (!sub) break;
    cur = sub;
    // The deepest command's own options first: its `--version <n>` hides the program's `--version` switch.
    opts.unshift(...sub.options);
  }
  return opts;
}

/** `argv` (normalized: long flags with two dashes) with the values of boolean flags turned into switches. */
export function boolFlagValues(program: Command, argv: readonly string[]): string[] {
  const opts = optionsAlong(program, argv);
  const isSwitch = (long: string) => {
    const o = opts.find((x) => x.long === long);
    return o && !o.required && !o.optional ? o : undefined;
  };
  const out: string[] = [];
  let rest = false;
  for (const a of argv) {
    if (a === '--') rest = true;
    const m = rest ? null : /^(--[\w-]+)=(.*)$/s.exec(a);
    const o = m ? isSwitch(m[1]!) : undefined;
    if (!m || !o || !(TRUE.test(m[2]!) || FALSE.test(m[2]!))) {
      out.push(a);
      continue;
    }
    const name = m[1]!;
    if (TRUE.test(m[2]!)) out.push(name);
    else if (!o.negate && isSwitch(`--no-${name.slice(2)}`)) out.push(`--no-${name.slice(2)}`);
    // `--no-x=false` (x stays on) and `--x=false` without a `--no-x` (x stays off): nothing to pass.
  }
  return out;
}
