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
  const items: Item[] = [];
  let pos = 0;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let parenDepth = 0;
  const emit = (type: ItemType, val = src.slice(start, pos)) => {
    items.push({ type, val, pos: start, line: startLine });
    start = pos;
    startLine = line;
  };
  const advance = (n: number) => {
    for (let i = 0; i < n; i++) if (src.charCodeAt(pos + i) === 10) line++;
    pos += n;
  };
  const fail = (reason: string): never => {
    throw new TemplateSyntaxError(reason, start, startLine);
  };
  const trimRightMarker = (at: number) => src[at] === ' ' || src[at] === '\t' || src[at] === '\r' || src[at] === '\n' ? src[at + 1] === '-' && src.startsWith(rightDelim, at + 2) : false;

  // Text, then actions, until the end.
  let trimNextText = false;
  while (true) {
    // Text up to the next left delimiter.
    const d = src.indexOf(leftDelim, pos);
    const textEnd = d === -1 ? src.length : d;
    let text = src.slice(pos, textEnd);
    const leftTrim = d !== -1 && src[d + leftDelim.length] === '-' && isSpace(src[d + leftDelim.length + 1]);
    if (trimNextText) text = text.replace(/^[ \t\r\n]+/, '');
    if (leftTrim) text = text.replace(/[ \t\r\n]+$/, '');
    trimNextText = false;
    start = pos;
    startLine = line;
    advance(textEnd - pos);
    if (text.length > 0) emit('text', text);
    start = pos;
    startLine = line;
    if (d === -1) break;
    // The left delimiter (and its trim marker).
    advance(leftDelim.length + (leftTrim ? 2 : 0));
    emit('leftDelim', leftDelim);
    // A comment: /* ... */ right after the delimiter (and optional space), then the right delimiter.
    if (src.startsWith('/*', pos)) {
      const end = src.indexOf('*/', pos + 2);
      if (end === -1) fail('unclosed comment');
      advance(end + 2 - pos);
      const rt = trimRightMarker(pos);
      if (rt) advance(2);
      if (!src.startsWith(rightDelim, pos)) fail('comment ends before closing delimiter');
      advance(rightDelim.length);
      items.pop(); // a comment yields nothing
      start = pos;
      startLine = line;
      trimNextText = rt;
      continue;
    }
    // Inside the action.
    for (;;) {
      start = pos;
      startLine = line;
      // A right delimiter, possibly with its trim marker.
      const rt = trimRightMarker(pos);
      if (rt || src.startsWith(rightDelim, pos)) {
        if (parenDepth > 0) fail('unclosed left paren');
        advance((rt ? 2 : 0) + rightDelim.length);
        start = pos - rightDelim.length;
        items.push({ type: 'rightDelim', val: rightDelim, pos: start, line });
        start = pos;
        startLine = line;
        trimNextText = rt;
        break;
      }
      const c = src[pos];
      if (c === undefined) fail('unclosed action');
      if (isSpace(c)) {
        let n = 0;
        while (isSpace(src[pos])) {
          advance(1);
          n++;
        }
        // A space before "-}}" belongs to the trim marker.
        if (trimRightMarker(pos - 1)) {
          pos--;
          if (src[pos] === '\n') line--;
          if (n === 1) continue;
        }
        emit('space');
        continue;
      }
      if (c === '=') {
        advance(1);
        emit('assign');
      } else if (c === ':') {
        if (src[pos + 1] !== '=') fail('expected :=');
        advance(2);
        emit('declare');
      } else if (c === '|') {
        advance(1);
        emit('pipe');
      } else if (c === '"') {
        advance(1);
        for (;;) {
          const x = src[pos];
          if (x === '\\') {
            advance(1);
            if (src[pos] === undefined || src[pos] === '\n') fail('unterminated quoted string');
            advance(1);
          } else if (x === undefined || x === '\n') fail('unterminated quoted string');
          else if (x === '"') {
            advance(1);
            break;
          } else advance(1);
        }
        emit('string');
      } else if (c === '`') {
        const end = src.indexOf('`', pos + 1);
        if (end === -1) fail('unterminated raw quoted string');
        advance(end + 1 - pos);
        emit('rawString');
      } else if (c === "'") {
        advance(1);
        for (;;) {
          const x = src[pos];
          if (x === '\\') advance(2);
          else if (x === undefined || x === '\n') fail('unterminated character constant');
          else if (x === "'") {
            advance(1);
            break;
          } else advance(1);
        }
        emit('charConstant');
      } else if (c === '$') {
        advance(1);
        while (isAlnum(src[pos])) advance(1);
        emit('variable');
        checkTerminator();
      } else if (c === '.') {
        if (/[0-9]/.test(src[pos + 1] ?? '')) {
          number();
        } else {
          advance(1);
          if (isAlnum(src[pos])) {
            while (isAlnum(src[pos])) advance(1);
            emit('field');
            checkTerminator();
          } else emit('dot');
        }
      } else if (c === '+' || c === '-' || /[0-9]/.test(c)) {
        number();
      } else if (isAlnum(c)) {
        while (isAlnum(src[pos])) advance(1);
        const word = src.slice(start, pos);
        if (KEYWORDS.has(word)) emit('keyword');
        else if (word === 'true' || word === 'false') emit('bool');
        else if (word === 'nil') emit('nil');
        else emit('identifier');
        checkTerminator();
      } else if (c === '(') {
        advance(1);
        parenDepth++;
        emit('leftParen');
      } else if (c === ')') {
        advance(1);
        parenDepth--;
        if (parenDepth < 0) fail('unexpected right paren');
        emit('rightParen');
      } else if (c.charCodeAt(0) <= 0x7f && c >= ' ') {
        advance(1);
        emit('char');
      } else fail(`unrecognized character in action: ${JSON.stringify(c)}`);
    }
  }
  start = pos;
  startLine = line;
  emit('eof', '');
  return items;

  function checkTerminator(): void {
    const x = src[pos];
    if (x === undefined || isSpace(x) || '.,|:()=$'.includes(x) || src.startsWith(rightDelim, pos)) return;
    fail(`bad character ${JSON.stringify(x)}`);
  }

  function number(): void {
    // Go's scanner: optional sign, then digits with base prefixes, '_', '.', exponents; 'i' (imaginary) is refused.
    if (src[pos] === '+' || src[pos] === '-') advance(1);
    let digits = '0123456789_';
    if (src[pos] === '0' && /[xXoObB]/.test(src[pos + 1] ?? '')) {
      const b = src[pos + 1]!.toLowerCase();
      digits = b === 'x' ? '0123456789abcdefABCDEF_' : b === 'o' ? '01234567_' : '01_';
      advance(2);
    }
    while (src[pos] !== undefined && digits.includes(src[pos]!)) advance(1);
    if (src[pos] === '.') {
      advance(1);
      while (src[pos] !== undefined && digits.includes(src[pos]!)) advance(1);
    }
    const exp = digits.length > 16 ? 'pP' : 'eE';
    if (src[pos] !== undefined && exp.includes(src[pos]!)) {
      advance(1);
      if (src[pos] === '+' || src[pos] === '-') advance(1);
      while (/[0-9_]/.test(src[pos] ?? '')) advance(1);
    }
    if (isAlnum(src[pos])) {
      advance(1);
      fail(`bad number syntax: ${JSON.stringify(src.slice(start, pos))}`);
    }
    emit('number');
  }
}
