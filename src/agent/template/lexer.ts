/**
 * The lexer of Go's text/template language (what consul-template and Vault Agent templates are
 * written in), written from the language's documentation and behaviour: text and actions between
 * delimiters (`{{` `}}` or configured ones), trim markers (`{{- ` and ` -}}` remove the white space
 * next to them), comments (`{{/* ... *\/}}`), and inside actions: spaces, identifiers and keywords,
 * fields (`.Name`), variables (`$x`), strings, raw strings, characters, numbers, `|`, `(`, `)`,
 * `:=`, `=` and `,`. Newlines are allowed inside actions (Go 1.16 and later).
 */

export type ItemType =
  | 'text'
  | 'leftDelim'
  | 'rightDelim'
  | 'space'
  | 'identifier'
  | 'keyword'
  | 'field'
  | 'dot'
  | 'variable'
  | 'string'
  | 'rawString'
  | 'char'
  | 'charConstant'
  | 'number'
  | 'bool'
  | 'nil'
  | 'pipe'
  | 'leftParen'
  | 'rightParen'
  | 'declare'
  | 'assign'
  | 'eof';

export interface Item {
  type: ItemType;
  /** The item's text (for text items, after trimming). */
  val: string;
  /** Offset in the template's source (UTF-16 units). */
  pos: number;
  /** 1-based line. */
  line: number;
}

/** A lexing or parsing error at an offset; the template wraps it with its name, line and column. */
export class TemplateSyntaxError extends Error {
  constructor(
    readonly reason: string,
    readonly pos: number,
    readonly line: number,
  ) {
    super(reason);
    this.name = 'TemplateSyntaxError';
  }
}

const KEYWORDS = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'template', 'with']);
const SPACE = new Set([' ', '\t', '\r', '\n']);
const isSpace = (c: string | undefined) => c !== undefined && SPACE.has(c);
const isAlnum = (c: string | undefined) => c !== undefined && /[\p{L}\p{Nd}_]/u.test(c);

/** Split `src` into items. Throws TemplateSyntaxError. */
export function lex(src: string, leftDelim = '{{', rightDelim = '}}'): Item[] {
  return new Lexer(src, leftDelim, rightDelim).run();
}

class Lexer {
  private readonly items: Item[] = [];
  private pos = 0;
  private start = 0;
  private line = 1;
  private startLine = 1;
  private parenDepth = 0;
  private trimNextText = false;

  constructor(
    private readonly src: string,
    private readonly leftDelim: string,
    private readonly rightDelim: string,
  ) {}

  private emit(type: ItemType, val = this.src.slice(this.start, this.pos)): void {
    this.items.push({ type, val, pos: this.start, line: this.startLine });
    this.mark();
  }
  private mark(): void {
    this.start = this.pos;
    this.startLine = this.line;
  }
  private advance(n: number): void {
    for (let i = 0; i < n; i++) if (this.src.charCodeAt(this.pos + i) === 10) this.line++;
    this.pos += n;
  }
  private fail(reason: string): never {
    throw new TemplateSyntaxError(reason, this.start, this.startLine);
  }
  /** A space, then `-`, then the right delimiter, at `at`. */
  private trimRightMarker(at: number): boolean {
    return isSpace(this.src[at]) && this.src[at + 1] === '-' && this.src.startsWith(this.rightDelim, at + 2);
  }

  run(): Item[] {
    const { src, leftDelim, rightDelim } = this;
    for (;;) {
      // Text up to the next left delimiter.
      const d = src.indexOf(leftDelim, this.pos);
      const textEnd = d === -1 ? src.length : d;
      let text = src.slice(this.pos, textEnd);
      const leftTrim = d !== -1 && src[d + leftDelim.length] === '-' && isSpace(src[d + leftDelim.length + 1]);
      if (this.trimNextText) text = text.replace(/^[ \t\r\n]+/, '');
      if (leftTrim) text = text.replace(/[ \t\r\n]+$/, '');
      this.trimNextText = false;
      this.mark();
      this.advance(textEnd - this.pos);
      if (text.length > 0) this.emit('text', text);
      this.mark();
      if (d === -1) break;
      // The left delimiter (and its trim marker).
      this.advance(leftDelim.length + (leftTrim ? 2 : 0));
      this.emit('leftDelim', leftDelim);
      // A comment: /* ... */ right after the delimiter, then the right delimiter.
      if (src.startsWith('/*', this.pos)) {
        const end = src.indexOf('*/', this.pos + 2);
        if (end === -1) this.fail('unclosed comment');
        this.advance(end + 2 - this.pos);
        const rt = this.trimRightMarker(this.pos);
        if (rt) this.advance(2);
        if (!src.startsWith(rightDelim, this.pos)) this.fail('comment ends before closing delimiter');
        this.advance(rightDelim.length);
        this.items.pop(); // a comment yields nothing
        this.mark();
        this.trimNextText = rt;
        continue;
      }
      this.insideAction();
    }
    this.mark();
    this.emit('eof', '');
    return this.items;
  }

  /** The items of one action, up to and including its right delimiter. */
  private insideAction(): void {
    const { src, rightDelim } = this;
    for (;;) {
      this.mark();
      // A right delimiter, possibly with its trim marker.
      const rt = this.trimRightMarker(this.pos);
      if (rt || src.startsWith(rightDelim, this.pos)) {
        if (this.parenDepth > 0) this.fail('unclosed left paren');
        this.advance((rt ? 2 : 0) + rightDelim.length);
        this.items.push({ type: 'rightDelim', val: rightDelim, pos: this.pos - rightDelim.length, line: this.line });
        this.mark();
        this.trimNextText = rt;
        return;
      }
      const c = src[this.pos];
      if (c === undefined) this.fail('unclosed action');
      if (isSpace(c)) this.space();
      else this.token(c);
    }
  }

  private space(): void {
    let n = 0;
    while (isSpace(this.src[this.pos])) {
      this.advance(1);
      n++;
    }
    // A space before "-}}" belongs to the trim marker.
    if (this.trimRightMarker(this.pos - 1)) {
      this.pos--;
      if (this.src[this.pos] === '\n') this.line--;
      if (n === 1) return;
    }
    this.emit('space');
  }

  private token(c: string): void {
    const src = this.src;
    if (c === '=') {
      this.advance(1);
      this.emit('assign');
    } else if (c === ':') {
      if (src[this.pos + 1] !== '=') this.fail('expected :=');
      this.advance(2);
      this.emit('declare');
    } else if (c === '|') {
      this.advance(1);
      this.emit('pipe');
    } else if (c === '"' || c === "'") {
      this.quoted(c);
    } else if (c === '`') {
      const end = src.indexOf('`', this.pos + 1);
      if (end === -1) this.fail('unterminated raw quoted string');
      this.advance(end + 1 - this.pos);
      this.emit('rawString');
    } else if (c === '$') {
      this.advance(1);
      while (isAlnum(src[this.pos])) this.advance(1);
      this.emit('variable');
      this.checkTerminator();
    } else if (c === '.' && !/[0-9]/.test(src[this.pos + 1] ?? '')) {
      this.advance(1);
      if (isAlnum(src[this.pos])) {
        while (isAlnum(src[this.pos])) this.advance(1);
        this.emit('field');
        this.checkTerminator();
      } else this.emit('dot');
    } else if (c === '.' || c === '+' || c === '-' || /[0-9]/.test(c)) {
      this.number();
    } else if (isAlnum(c)) {
      while (isAlnum(src[this.pos])) this.advance(1);
      const word = src.slice(this.start, this.pos);
      if (KEYWORDS.has(word)) this.emit('keyword');
      else if (word === 'true' || word === 'false') this.emit('bool');
      else if (word === 'nil') this.emit('nil');
      else this.emit('identifier');
      this.checkTerminator();
    } else if (c === '(') {
      this.advance(1);
      this.parenDepth++;
      this.emit('leftParen');
    } else if (c === ')') {
      this.advance(1);
      this.parenDepth--;
      if (this.parenDepth < 0) this.fail('unexpected right paren');
      this.emit('rightParen');
    } else if (c.charCodeAt(0) <= 0x7f && c >= ' ') {
      this.advance(1);
      this.emit('char');
    } else this.fail(`unrecognized character in action: ${JSON.stringify(c)}`);
  }

  /** A "string" or a 'c'haracter constant. */
  private quoted(q: string): void {
    const src = this.src;
    this.advance(1);
    for (;;) {
      const x = src[this.pos];
      if (x === '\\') {
        this.advance(1);
        if (src[this.pos] === undefined || src[this.pos] === '\n')
          this.fail(q === '"' ? 'unterminated quoted string' : 'unterminated character constant');
        this.advance(1);
      } else if (x === undefined || x === '\n')
        this.fail(q === '"' ? 'unterminated quoted string' : 'unterminated character constant');
      else if (x === q) {
        this.advance(1);
        break;
      } else this.advance(1);
    }
    this.emit(q === '"' ? 'string' : 'charConstant');
  }

  private checkTerminator(): void {
    const x = this.src[this.pos];
    if (x === undefined || isSpace(x) || '.,|:()=$'.includes(x) || this.src.startsWith(this.rightDelim, this.pos))
      return;
    this.fail(`bad character ${JSON.stringify(x)}`);
  }

  private number(): void {
    // Go's scanner: optional sign, then digits with base prefixes, '_', '.', exponents; 'i' (imaginary) is refused.
    const src = this.src;
    if (src[this.pos] === '+' || src[this.pos] === '-') this.advance(1);
    let digits = '0123456789_';
    if (src[this.pos] === '0' && /[xXoObB]/.test(src[this.pos + 1] ?? '')) {
      const b = src[this.pos + 1]!.toLowerCase();
      digits = b === 'x' ? '0123456789abcdefABCDEF_' : b === 'o' ? '01234567_' : '01_';
      this.advance(2);
    }
    const run = () => {
      while (src[this.pos] !== undefined && digits.includes(src[this.pos]!)) this.advance(1);
    };
    run();
    if (src[this.pos] === '.') {
      this.advance(1);
      run();
    }
    const exp = digits.length > 16 ? 'pP' : 'eE';
    if (src[this.pos] !== undefined && exp.includes(src[this.pos]!)) {
      this.advance(1);
      if (src[this.pos] === '+' || src[this.pos] === '-') this.advance(1);
      while (/[0-9_]/.test(src[this.pos] ?? '')) this.advance(1);
    }
    if (isAlnum(src[this.pos])) {
      this.advance(1);
      this.fail(`bad number syntax: ${JSON.stringify(src.slice(this.start, this.pos))}`);
    }
    this.emit('number');
  }
}
