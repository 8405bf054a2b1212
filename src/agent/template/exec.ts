/**
 * Executing a parsed Go template against data: Go's text/template semantics for fields and map
 * keys (missing keys print `<no value>`, or fail with `missingkey=error`, Vault Agent's
 * `error_on_missing_key`), variables and their scopes, pipelines (the previous value is the last
 * argument), `if`/`with`/`range` (maps in sorted key order, `break`/`continue`), `template`, and
 * the builtin functions (and, or, not, len, index, slice, print, printf, println, html, js,
 * urlquery, eq, ne, lt, le, gt, ge). Errors read as Go's: `template: NAME:LINE:COL: executing
 * "NAME" at <.Data.foo>: map has no entry for key "foo"`.
 */
import { argString, parse, pipeString, type Arg, type Command, type Node, type Pipe, type Pos } from './parser.js';
import { TemplateSyntaxError } from './lexer.js';
import { compareGoStrings, formatValue, goType, GoStruct, isMap, truth } from './values.js';
import { ArgTypeError, ArityError, builtin } from './builtins.js';
import { ValueError, type TemplateFunc } from './func-types.js';

export { ValueError, type TemplateFunc };

export { ArgTypeError, ArityError };

/** A template function: gets evaluated arguments; throws an Error to fail the template. */

/**
 * A template's error with the template's name, line and (for execution errors) column. `message` is
 * Go's, word for word; `logMessage` is the same without values from the data (Go puts a value in a
 * few messages, such as "range can't iterate over VALUE"; the agent logs never hold secrets).
 */
export class TemplateError extends Error {
  readonly logMessage: string;
  constructor(
    message: string,
    readonly templateName: string,
    readonly line: number,
    readonly column?: number,
    logMessage?: string,
  ) {
    super(message);
    this.name = 'TemplateError';
    this.logMessage = logMessage ?? message;
  }
}

type ControlNode = Pos & { t: 'if' | 'with' | 'range'; pipe: Pipe; list: Node[]; elseList?: Node[] };

class ExecFailure extends Error {
  constructor(
    readonly reason: string,
    readonly at: { pos: number; text: string },
    readonly redacted = reason,
  ) {
    super(reason);
  }
}
class BreakSignal {}
class ContinueSignal {}

export interface TemplateOptions {
  leftDelim?: string;
  rightDelim?: string;
  /** Go's `missingkey=error`. */
  errorOnMissingKey?: boolean;
}

const BUILTINS = [
  'and',
  'or',
  'not',
  'len',
  'index',
  'slice',
  'print',
  'printf',
  'println',
  'html',
  'js',
  'urlquery',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'call',
];

/** A parsed template, ready to execute many times. */
export class GoTemplate {
  private readonly root: Node[];
  private readonly defines: Map<string, Node[]>;
  constructor(
    readonly name: string,
    private readonly src: string,
    private readonly funcs: Record<string, TemplateFunc>,
    private readonly opts: TemplateOptions = {},
  ) {
    try {
      const t = parse(
        src,
        new Set([...BUILTINS, ...Object.keys(funcs)]),
        opts.leftDelim || '{{',
        opts.rightDelim || '}}',
      );
      this.root = t.root;
      this.defines = t.defines;
    } catch (e) {
      if (e instanceof TemplateSyntaxError)
        throw new TemplateError(`template: ${name}:${e.line}: ${e.reason}`, name, e.line);
      throw e;
    }
  }

  execute(data: unknown): string {
    const st = new State(this.funcs, this.defines, Boolean(this.opts.errorOnMissingKey), data);
    try {
      st.walk(data, this.root);
    } catch (e) {
      if (e instanceof ExecFailure) {
        const text = this.src.slice(0, e.at.pos);
        const nl = text.lastIndexOf('\n');
        const line = 1 + (text.match(/\n/g)?.length ?? 0);
        const col = nl === -1 ? Buffer.byteLength(text) : Buffer.byteLength(text.slice(nl + 1));
        const where = `template: ${this.name}:${line}:${col}: executing "${this.name}" at <${e.at.text}>: `;
        throw new TemplateError(where + e.reason, this.name, line, col, where + e.redacted);
      }
      throw e;
    }
    return st.out.join('');
  }
}

class State {
  out: string[] = [];
  private vars: { name: string; value: unknown }[];
  private at: { pos: number; text: string } = { pos: 0, text: '' };
  private depth = 0;

  constructor(
    private readonly funcs: Record<string, TemplateFunc>,
    private readonly defines: Map<string, Node[]>,
    private readonly missingError: boolean,
    data: unknown,
  ) {
    this.vars = [{ name: '$', value: data }];
  }

  private fail(reason: string, redacted?: string): never {
    throw new ExecFailure(reason, this.at, redacted);
  }
  private here(pos: number, text: string): void {
    this.at = { pos, text };
  }

  walk(dot: unknown, list: Node[]): void {
    for (const n of list) this.node(dot, n);
  }

  private node(dot: unknown, n: Node): void {
    switch (n.t) {
      case 'text':
        this.out.push(n.text);
        return;
      case 'action': {
        const v = this.pipeline(dot, n.pipe);
        if (n.pipe.decl.length === 0) this.print(v);
        return;
      }
      case 'if':
      case 'with': {
        const mark = this.vars.length;
        const v = this.pipeline(dot, n.pipe);
        if (truth(v)) this.walk(n.t === 'with' ? v : dot, n.list);
        else if (n.elseList) this.walk(dot, n.elseList);
        this.vars.length = mark;
        return;
      }
      case 'range':
        this.range(dot, n);
        return;
      case 'break':
        throw new BreakSignal();
      case 'continue':
        throw new ContinueSignal();
      case 'template': {
        const body = this.defines.get(n.name);
        this.here(n.pos, `{{template "${n.name}"${n.pipe ? ` ${pipeString(n.pipe)}` : ''}}}`);
        if (!body) this.fail(`template "${n.name}" not defined`);
        if (++this.depth > 100000) this.fail('exceeded maximum template depth (100000)');
        const v = n.pipe ? this.pipeline(dot, n.pipe) : undefined;
        const saved = this.vars;
        this.vars = [{ name: '$', value: v }];
        this.walk(v, body);
        this.vars = saved;
        this.depth--;
        return;
      }
    }
  }

  private range(dot: unknown, n: ControlNode): void {
    const mark = this.vars.length;
    const v = this.pipeline(dot, n.pipe);
    const decl = n.pipe.decl.length;
    const one = (index: unknown, elem: unknown): boolean => {
      if (decl > 0) this.vars[this.vars.length - 1]!.value = elem;
      if (decl > 1) this.vars[this.vars.length - 2]!.value = index;
      const inner = this.vars.length;
      try {
        this.walk(elem, n.list);
      } catch (e) {
        if (e instanceof BreakSignal) return false;
        if (!(e instanceof ContinueSignal)) throw e;
      } finally {
        this.vars.length = inner;
      }
      return true;
    };
    let any = false;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        any = true;
        if (!one(BigInt(i), v[i])) break;
      }
    } else if (isMap(v)) {
      for (const k of Object.keys(v).sort(compareGoStrings)) {
        any = true;
        if (!one(k, v[k])) break;
      }
    } else if (v !== undefined && v !== null) {
      this.fail(`range can't iterate over ${formatValue(v)}`, `range can't iterate over a value of type ${goType(v)}`);
    }
    if (!any && n.elseList) this.walk(dot, n.elseList);
    this.vars.length = mark;
  }

  private print(v: unknown): void {
    this.out.push(v === undefined ? '<no value>' : formatValue(v));
  }

  private pipeline(dot: unknown, pipe: Pipe): unknown {
    let value: unknown = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.command(dot, cmd, value);
      // An interface{} holding nil becomes Go's invalid value.
      if (value === null) value = undefined;
    }
    for (const name of pipe.decl) {
      if (pipe.isAssign) {
        const slot = [...this.vars].reverse().find((x) => x.name === name);
        if (!slot) this.fail(`undefined variable: ${name}`);
        slot.value = value;
      } else this.vars.push({ name, value });
    }
    return value;
  }

  private command(dot: unknown, cmd: Command, final: unknown): unknown {
    const first = cmd.args[0]!;
    this.here(first.pos, argString(first));
    switch (first.t) {
      case 'field':
        return this.fieldChain(dot, dot, first.idents, cmd.args, final);
      case 'chain': {
        this.notAFunction(cmd.args, final);
        const v = this.arg(dot, first.node);
        return this.fieldChain(dot, v, first.fields, cmd.args, final);
      }
      case 'identifier':
        return this.call(dot, first.name, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.pipeline(dot, first.pipe);
      case 'variable': {
        const v = this.variable(first.idents[0]!);
        if (first.idents.length === 1) {
          this.notAFunction(cmd.args, final);
          return v;
        }
        return this.fieldChain(dot, v, first.idents.slice(1), cmd.args, final);
      }
      case 'nil':
        this.fail('nil is not a command');
        break;
      case 'dot':
        this.notAFunction(cmd.args, final);
        return dot;
    }
    this.notAFunction(cmd.args, final);
    return this.literal(first);
  }

  private notAFunction(args: Arg[], final: unknown): void {
    if (args.length > 1 || final !== MISSING) this.fail(`can't give argument to non-function ${argString(args[0]!)}`);
  }

  private literal(a: Arg): unknown {
    switch (a.t) {
      case 'bool':
        return a.value;
      case 'number':
        return a.value;
      case 'string':
        return a.value;
      case 'dot':
        return undefined;
      default:
        return undefined;
    }
  }

  private variable(name: string): unknown {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i]!.name === name) return this.vars[i]!.value;
    return this.fail(`undefined variable: ${name}`);
  }

  private fieldChain(_dot: unknown, receiver: unknown, idents: string[], args: Arg[], final: unknown): unknown {
    let r = receiver;
    for (let i = 0; i < idents.length; i++) {
      const last = i === idents.length - 1;
      // A value found in a map is an interface {} to Go, which names that type in errors.
      r = this.field(idents[i]!, r, last && (args.length > 1 || final !== MISSING), i > 0);
    }
    return r;
  }

  private field(name: string, receiver: unknown, hasArgs: boolean, fromMap = false): unknown {
    if (receiver === undefined) {
      if (this.missingError) this.fail(`nil data; no entry for key "${name}"`);
      return undefined;
    }
    if (receiver === null) this.fail(`nil pointer evaluating interface {}.${name}`);
    if (receiver instanceof GoStruct) {
      if (!(name in receiver.fields)) this.fail(`can't evaluate field ${name} in type ${receiver.typeName}`);
      if (hasArgs) this.fail(`${name} has arguments but cannot be invoked as function`);
      return receiver.fields[name];
    }
    if (isMap(receiver)) {
      if (hasArgs) this.fail(`${name} is not a method but has arguments`);
      if (Object.prototype.hasOwnProperty.call(receiver, name)) return receiver[name];
      if (this.missingError) this.fail(`map has no entry for key "${name}"`);
      return undefined;
    }
    return this.fail(`can't evaluate field ${name} in type ${fromMap ? 'interface {}' : goType(receiver)}`);
  }

  /** An argument's value (a function's parameter is interface{}: a missing value becomes nil). */
  private arg(dot: unknown, a: Arg): unknown {
    this.here(a.pos, argString(a));
    switch (a.t) {
      case 'dot':
        return dot;
      case 'nil':
        return null;
      case 'field':
        return this.fieldChain(dot, dot, a.idents, [a], MISSING);
      case 'variable': {
        const v = this.variable(a.idents[0]!);
        return a.idents.length === 1 ? v : this.fieldChain(dot, v, a.idents.slice(1), [a], MISSING);
      }
      case 'pipe':
        return this.pipeline(dot, a.pipe);
      case 'identifier':
        return this.call(dot, a.name, [a], MISSING);
      case 'chain':
        return this.fieldChain(dot, this.arg(dot, a.node), a.fields, [a], MISSING);
      default:
        return this.literal(a);
    }
  }

  private call(dot: unknown, name: string, args: Arg[], final: unknown): unknown {
    // Errors of the call name the whole command (`<index .l 5>`) at the function's position.
    const at = { pos: args[0]!.pos, text: args.map(argString).join(' ') };
    const rest = args.slice(1);
    const n = rest.length + (final !== MISSING ? 1 : 0);
    // and / or evaluate their arguments only as far as needed (Go 1.18+).
    if (name === 'and' || name === 'or') {
      if (n < 1) this.fail(`wrong number of args for ${name}: want at least 1 got 0`);
      let v: unknown;
      for (let i = 0; i < n; i++) {
        v = i < rest.length ? this.arg(dot, rest[i]!) : final;
        if (truth(v) === (name === 'or')) return v;
      }
      return v;
    }
    const values = rest.map((a) => this.arg(dot, a));
    if (final !== MISSING) values.push(final);
    const lastArg = this.at;
    this.at = at;
    const fn = builtin(name) ?? this.funcs[name];
    if (!fn) this.fail(`"${name}" is not a defined function`);
    try {
      return fn(...values.map((v) => (v === undefined ? null : v)));
    } catch (e) {
      if (e instanceof ExecFailure) throw e;
      if (e instanceof ArgTypeError) {
        // Go checks argument types before the call: a literal is "expected T; found 1", another
        // value "wrong type for value; expected T; got G", at that argument (or the last evaluated).
        const i = values.indexOf(e.value === undefined ? null : e.value);
        const node = i >= 0 && i < rest.length ? rest[i]! : undefined;
        this.at = node ? { pos: node.pos, text: argString(node) } : lastArg;
        if (node && ['number', 'bool', 'string', 'nil'].includes(node.t))
          this.fail(`expected ${e.expected}; found ${argString(node)}`);
        this.fail(`wrong type for value; expected ${e.expected}; got ${goType(e.value)}`);
      }
      if (e instanceof ArityError) {
        this.at = { pos: args[0]!.pos, text: name };
        this.fail(`wrong number of args for ${name}: ${e.message}`);
      }
      this.fail(
        `error calling ${name}: ${(e as Error).message}`,
        e instanceof ValueError ? `error calling ${name}: ${e.redacted}` : undefined,
      );
    }
  }
}

/** The value before a pipeline's first command (Go's missingVal). */
const MISSING = Symbol('missing');

/** Parse and execute in one step (tests, env templates). */
export function renderTemplate(
  name: string,
  src: string,
  data: unknown,
  funcs: Record<string, TemplateFunc> = {},
  opts: TemplateOptions = {},
): string {
  return new GoTemplate(name, src, funcs, opts).execute(data);
}
