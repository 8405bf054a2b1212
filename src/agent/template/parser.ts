/**
 * The parser of Go's text/template language: items from lexer.ts into a tree of text, actions and
 * control structures (`if`/`else if`/`else`, `with`/`else with`/`else`, `range`/`else` with
 * `break` and `continue`, `define`, `template`, `block`), pipelines with declarations
 * (`$x := ...`, `$i, $e := ...` in range) and assignments (`$x = ...`), commands and operands
 * (fields, variables, chains, literals, functions, parenthesised pipelines). As Go does, it refuses
 * undefined variables and unknown functions before anything runs.
 */
import { lex, TemplateSyntaxError, type Item, type ItemType } from './lexer.js';

export interface Pos {
  pos: number;
  line: number;
}

export type Arg =
  | (Pos & { t: 'field'; idents: string[] })
  | (Pos & { t: 'variable'; idents: string[] })
  | (Pos & { t: 'dot' })
  | (Pos & { t: 'nil' })
  | (Pos & { t: 'bool'; value: boolean })
  | (Pos & { t: 'number'; text: string; value: number | bigint })
  | (Pos & { t: 'string'; text: string; value: string })
  | (Pos & { t: 'identifier'; name: string })
  | (Pos & { t: 'pipe'; pipe: Pipe })
  | (Pos & { t: 'chain'; node: Arg; fields: string[] });

export interface Command extends Pos {
  args: Arg[];
}

export interface Pipe extends Pos {
  isAssign: boolean;
  decl: string[];
  cmds: Command[];
}

export type Node =
  | (Pos & { t: 'text'; text: string })
  | (Pos & { t: 'action'; pipe: Pipe })
  | (Pos & { t: 'if' | 'with' | 'range'; pipe: Pipe; list: Node[]; elseList?: Node[] })
  | (Pos & { t: 'template'; name: string; pipe?: Pipe })
  | (Pos & { t: 'break' | 'continue' });

/** The text of an operand, as Go prints it in error messages (`<.Data.foo>`). */
export function argString(a: Arg): string {
  switch (a.t) {
    case 'field':
      return `.${a.idents.join('.')}`;
    case 'variable':
      return a.idents.join('.');
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'bool':
      return String(a.value);
    case 'number':
      return a.text;
    case 'string':
      return a.text;
    case 'identifier':
      return a.name;
    case 'pipe':
      return `(${pipeString(a.pipe)})`;
    case 'chain':
      return `${argString(a.node)}.${a.fields.join('.')}`;
  }
}

export function pipeString(p: Pipe): string {
  const decl = p.decl.length ? `${p.decl.join(', ')} ${p.isAssign ? '=' : ':='} ` : '';
  return decl + p.cmds.map((c) => c.args.map(argString).join(' ')).join(' | ');
}

/** Parse `src`; returns the main tree and the templates it defines. Throws TemplateSyntaxError. */
export function parse(
  src: string,
  funcs: ReadonlySet<string>,
  leftDelim = '{{',
  rightDelim = '}}',
): { root: Node[]; defines: Map<string, Node[]> } {
  return new Parser(lex(src, leftDelim, rightDelim), funcs).parseAll();
}

class Parser {
  private i = 0;
  private vars: string[] = ['$'];
  private rangeDepth = 0;
  private readonly defines = new Map<string, Node[]>();

  constructor(
    private readonly items: Item[],
    private readonly funcs: ReadonlySet<string>,
  ) {}

  private peek(): Item {
    return this.items[this.i]!;
  }
  private next(): Item {
    return this.items[this.i++]!;
  }
  private backup(n = 1): void {
    this.i -= n;
  }
  private nextNonSpace(): Item {
    let t = this.next();
    while (t.type === 'space') t = this.next();
    return t;
  }
  private peekNonSpace(): Item {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }
  private fail(reason: string, at: Item | Pos = this.peek()): never {
    throw new TemplateSyntaxError(reason, at.pos, at.line);
  }
  private unexpected(t: Item, context: string): never {
    const what =
      t.type === 'eof' ? 'EOF' : t.type === 'rightDelim' || t.type === 'leftDelim' ? `"${t.val}"` : `<${t.val}>`;
    this.fail(`unexpected ${what} in ${context}`, t);
  }
  private expect(type: ItemType, context: string): Item {
    const t = this.nextNonSpace();
    if (t.type !== type) this.unexpected(t, context);
    return t;
  }

  parseAll(): { root: Node[]; defines: Map<string, Node[]> } {
    const root: Node[] = [];
    while (this.peek().type !== 'eof') {
      if (this.peek().type === 'leftDelim') {
        let j = this.i + 1;
        while (this.items[j]?.type === 'space') j++;
        const kw = this.items[j]!;
        if (kw.type === 'keyword' && kw.val === 'define') {
          this.i = j + 1;
          this.parseDefine();
          continue;
        }
      }
      const n = this.textOrAction();
      if (typeof n === 'string') this.fail(`unexpected {{${n.replace('-', ' ')}}}`, this.items[this.i - 1]!);
      root.push(n);
    }
    return { root, defines: this.defines };
  }

  private parseDefine(): void {
    const nameTok = this.nextNonSpace();
    if (nameTok.type !== 'string' && nameTok.type !== 'rawString') this.unexpected(nameTok, 'define clause');
    const name = unquote(nameTok);
    this.expect('rightDelim', 'define clause');
    const saved = this.vars;
    this.vars = ['$'];
    const { list, next } = this.itemList();
    if (next !== 'end') this.fail('unexpected {{else}} in define clause');
    this.vars = saved;
    this.defines.set(name, list);
  }

  /** A text item or an action (or the markers `end` / `else` that close a list). */
  private textOrAction(): Node | 'end' | 'else' | 'else-if' | 'else-with' {
    const t = this.nextNonSpace();
    if (t.type === 'text') return { t: 'text', text: t.val, pos: t.pos, line: t.line };
    if (t.type === 'leftDelim') return this.action();
    return this.unexpected(t, 'input');
  }

  private itemList(): { list: Node[]; next: 'end' | 'else' | 'else-if' | 'else-with' } {
    const list: Node[] = [];
    while (this.peekNonSpace().type !== 'eof') {
      const n = this.textOrAction();
      if (typeof n === 'string') return { list, next: n };
      list.push(n);
    }
    return this.fail('unexpected EOF');
  }

  private action(): Node | 'end' | 'else' | 'else-if' | 'else-with' {
    const t = this.nextNonSpace();
    if (t.type === 'keyword') {
      switch (t.val) {
        case 'end':
          this.expect('rightDelim', 'end');
          return 'end';
        case 'else': {
          const p = this.peekNonSpace();
          if (p.type === 'keyword' && (p.val === 'if' || p.val === 'with')) {
            this.nextNonSpace();
            return p.val === 'if' ? 'else-if' : 'else-with';
          }
          this.expect('rightDelim', 'else');
          return 'else';
        }
        case 'if':
        case 'with':
        case 'range':
          return this.control(t.val, t);
        case 'break':
        case 'continue':
          if (this.rangeDepth === 0) this.fail(`{{${t.val}}} outside {{range}}`, t);
          this.expect('rightDelim', t.val);
          return { t: t.val, pos: t.pos, line: t.line };
        case 'template':
        case 'block':
          return this.templateControl(t);
        case 'define':
          return this.fail('unexpected <define> in command', t);
      }
    }
    this.backup();
    const pipe = this.pipeline('command', 'rightDelim');
    return { t: 'action', pipe, pos: pipe.pos, line: pipe.line };
  }

  private control(kind: 'if' | 'with' | 'range', at: Item): Node {
    const mark = this.vars.length;
    const pipe = this.pipeline(kind, 'rightDelim');
    if (kind === 'range') this.rangeDepth++;
    let { list, next } = this.itemList();
    if (kind === 'range') this.rangeDepth--;
    let elseList: Node[] | undefined;
    if (next === 'else-if' || next === 'else-with') {
      if (kind === 'range' || (next === 'else-if') !== (kind === 'if'))
        this.fail(`unexpected {{${next.replace('-', ' ')}}}`);
      // {{if a}}x{{else if b}}y{{end}} is {{if a}}x{{else}}{{if b}}y{{end}}{{end}}: one {{end}} for both.
      const inner = this.items[this.i - 1]!;
      elseList = [this.control(kind, inner)];
    } else if (next === 'else') {
      ({ list: elseList, next } = this.itemList());
      if (next !== 'end') this.fail(`expected end; found {{${next.replace('-', ' ')}}}`);
    }
    this.vars.length = mark;
    void list;
    return { t: kind, pipe, list, elseList, pos: at.pos, line: at.line };
  }

  private templateControl(at: Item): Node {
    const nameTok = this.nextNonSpace();
    if (nameTok.type !== 'string' && nameTok.type !== 'rawString') this.unexpected(nameTok, `${at.val} clause`);
    const name = unquote(nameTok);
    let pipe: Pipe | undefined;
    if (this.peekNonSpace().type !== 'rightDelim') pipe = this.pipeline(`${at.val} clause`, 'rightDelim');
    else this.nextNonSpace();
    if (at.val === 'block') {
      const saved = this.vars;
      this.vars = ['$'];
      const { list, next } = this.itemList();
      if (next !== 'end') this.fail('unexpected {{else}} in block clause');
      this.vars = saved;
      this.defines.set(name, list);
    }
    // Go places a template node at its name.
    return { t: 'template', name, pipe, pos: nameTok.pos, line: nameTok.line };
  }

  private pipeline(context: string, end: ItemType): Pipe {
    const first = this.peekNonSpace();
    const pipe: Pipe = { isAssign: false, decl: [], cmds: [], pos: first.pos, line: first.line };
    // Declarations or an assignment.
    for (;;) {
      const v = this.peekNonSpace();
      if (v.type !== 'variable') break;
      const save = this.i;
      this.nextNonSpace();
      const after = this.peekNonSpace();
      if (after.type === 'declare' || after.type === 'assign') {
        this.nextNonSpace();
        pipe.isAssign = after.type === 'assign';
        pipe.decl.push(v.val);
        if (pipe.isAssign) this.useVar(v);
        else this.vars.push(v.val);
        break;
      }
      if (after.type === 'char' && after.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(v.val);
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const n = this.peekNonSpace();
          if (n.type === 'variable') continue;
          this.fail('range can only initialize variables');
        }
        this.fail(`too many declarations in ${context}`);
      }
      this.i = save;
      break;
    }
    for (;;) {
      const t = this.nextNonSpace();
      if (t.type === end) {
        if (pipe.cmds.length === 0) this.fail(`missing value for ${context}`, t);
        for (let k = 1; k < pipe.cmds.length; k++) {
          const a = pipe.cmds[k]!.args[0]!;
          if (['bool', 'dot', 'nil', 'number', 'string'].includes(a.t))
            this.fail(`non executable command in pipeline stage ${k + 1}`, a);
        }
        return pipe;
      }
      if (
        [
          'bool',
          'charConstant',
          'dot',
          'field',
          'identifier',
          'number',
          'nil',
          'rawString',
          'string',
          'variable',
          'leftParen',
        ].includes(t.type)
      ) {
        this.backup();
        pipe.cmds.push(this.command());
      } else this.unexpected(t, context);
    }
  }

  private command(): Command {
    const first = this.peekNonSpace();
    const cmd: Command = { args: [], pos: first.pos, line: first.line };
    for (;;) {
      this.peekNonSpace();
      const op = this.operand();
      if (op) cmd.args.push(op);
      const t = this.next();
      if (t.type === 'space') continue;
      if (t.type === 'rightDelim' || t.type === 'rightParen') this.backup();
      else if (t.type !== 'pipe') this.unexpected(t, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.fail('empty command', cmd);
    return cmd;
  }

  private operand(): Arg | null {
    const node = this.term();
    if (!node) return null;
    if (this.peek().type !== 'field') return node;
    const fields: string[] = [];
    const at = this.peek();
    while (this.peek().type === 'field') fields.push(this.next().val.slice(1));
    // As Go's parser: a field or variable with more fields takes the position of the first added one.
    if (node.t === 'field' || node.t === 'variable')
      return { ...node, idents: [...node.idents, ...fields], pos: at.pos, line: at.line };
    if (['bool', 'string', 'number', 'nil', 'dot'].includes(node.t))
      this.fail(`unexpected . after term "${argString(node)}"`, at);
    return { t: 'chain', node, fields, pos: at.pos, line: at.line };
  }

  private term(): Arg | null {
    const t = this.nextNonSpace();
    const p = { pos: t.pos, line: t.line };
    switch (t.type) {
      case 'identifier':
        if (!this.funcs.has(t.val)) this.fail(`function "${t.val}" not defined`, t);
        return { t: 'identifier', name: t.val, ...p };
      case 'dot':
        return { t: 'dot', ...p };
      case 'nil':
        return { t: 'nil', ...p };
      case 'variable':
        return { t: 'variable', idents: [this.useVar(t)], ...p };
      case 'field':
        return { t: 'field', idents: [t.val.slice(1)], ...p };
      case 'bool':
        return { t: 'bool', value: t.val === 'true', ...p };
      case 'number':
      case 'charConstant':
        return { t: 'number', text: t.val, value: numberValue(t), ...p };
      case 'leftParen':
        return { t: 'pipe', pipe: this.pipeline('parenthesized pipeline', 'rightParen'), ...p };
      case 'string':
      case 'rawString':
        return { t: 'string', text: t.val, value: unquote(t), ...p };
    }
    this.backup();
    return null;
  }

  private useVar(t: Item): string {
    if (!this.vars.includes(t.val)) this.fail(`undefined variable "${t.val}"`, t);
    return t.val;
  }
}

/** A Go string literal's value (interpreted or raw). */
export function unquote(t: Item): string {
  if (t.type === 'rawString') return t.val.slice(1, -1).replace(/\r/g, '');
  const body = t.val.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = {
      a: '\x07',
      b: '\b',
      f: '\f',
      n: '\n',
      r: '\r',
      t: '\t',
      v: '\v',
      '\\': '\\',
      '"': '"',
    };
    if (e !== undefined && simple[e] !== undefined) out += simple[e];
    else if (e === 'x' || e === 'u' || e === 'U') {
      const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      const hex = body.slice(i + 1, i + 1 + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex))
        throw new TemplateSyntaxError(`invalid syntax: ${t.val}`, t.pos, t.line);
      // \x is a byte in Go; bytes above 0x7f are not valid UTF-8 alone and are kept as the code point.
      out += String.fromCodePoint(parseInt(hex, 16));
      i += n;
    } else if (e !== undefined && /[0-7]/.test(e)) {
      const oct = body.slice(i, i + 3);
      if (!/^[0-7]{3}$/.test(oct)) throw new TemplateSyntaxError(`invalid syntax: ${t.val}`, t.pos, t.line);
      out += String.fromCharCode(parseInt(oct, 8));
      i += 2;
    } else throw new TemplateSyntaxError(`invalid syntax: ${t.val}`, t.pos, t.line);
  }
  return out;
}

/** A number literal: Go ints become bigint, floats number; a character constant is its code point (int). */
function numberValue(t: Item): number | bigint {
  if (t.type === 'charConstant') {
    const inner = unquote({
      ...t,
      type: 'string',
      val: `"${t.val.slice(1, -1).replace(/"/g, '\\"').replace(/\\'/g, "'")}"`,
    });
    const cp = inner.codePointAt(0);
    if (cp === undefined || [...inner].length !== 1)
      throw new TemplateSyntaxError(`malformed character constant: ${t.val}`, t.pos, t.line);
    return BigInt(cp);
  }
  const s = t.val.replace(/_/g, '');
  const neg = s.startsWith('-');
  const body = s.replace(/^[-+]/, '');
  let m: RegExpExecArray | null;
  if ((m = /^0[xX]([0-9a-fA-F]+)$/.exec(body))) return (neg ? -1n : 1n) * BigInt(`0x${m[1]}`);
  if ((m = /^0[oO]?([0-7]+)$/.exec(body))) return (neg ? -1n : 1n) * BigInt(`0o${m[1]}`);
  if ((m = /^0[bB]([01]+)$/.exec(body))) return (neg ? -1n : 1n) * BigInt(`0b${m[1]}`);
  if (/^[0-9]+$/.test(body)) return (neg ? -1n : 1n) * BigInt(body);
  // With a point or an exponent it is a float64 in Go's templates, even when integral (1e3, 2.0).
  if (/^([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/.test(body)) return Number(s);
  throw new TemplateSyntaxError(`illegal number syntax: "${t.val}"`, t.pos, t.line);
}
