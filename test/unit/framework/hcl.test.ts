import { describe, expect, it } from 'vitest';
import {
  HclSyntaxError,
  hclToPlain,
  linesOf,
  parseHcl,
  type HclObject,
  type PlainObject,
} from '../../../src/framework/hcl.js';

const plain = (src: string) => hclToPlain(parseHcl(src)) as PlainObject;

describe('HCL1 parser', () => {
  it('parses a Vault server config: blocks with labels, attributes, lists, comments, booleans and numbers', () => {
    const src = `# Vault-style config
storage "postgresql" {
  connection_url = "postgres://u:p@db/vault?sslmode=disable" // inline comment
  ha_enabled     = "true"
  max_parallel   = 16
}
/* a block
   comment */
listener "tcp" {
  address     = "0.0.0.0:8200"
  tls_disable = true
}
listener "unix" { address = "/run/k.sock", socket_mode = "660" }
api_addr = "http://10.0.0.1:8200"
ui = false
ratio = -1.5e2
hex = 0x1F
tags = ["a", "b",]
nested = { a = 1, b = { c = [1, 2] } }
`;
    const doc = parseHcl(src);
    expect(doc.items.map((i) => [i.key, i.labels, i.line, i.block])).toEqual([
      ['storage', ['postgresql'], 2, true],
      ['listener', ['tcp'], 9, true],
      ['listener', ['unix'], 13, true],
      ['api_addr', [], 14, false],
      ['ui', [], 15, false],
      ['ratio', [], 16, false],
      ['hex', [], 17, false],
      ['tags', [], 18, false],
      ['nested', [], 19, false],
    ]);
    const storage = doc.items[0]!.value as HclObject;
    expect(storage.items.map((i) => [i.key, i.line, i.column, i.value.type])).toEqual([
      ['connection_url', 3, 3, 'string'],
      ['ha_enabled', 4, 3, 'string'],
      ['max_parallel', 5, 3, 'number'],
    ]);
    const p = hclToPlain(doc) as PlainObject;
    expect(p.storage).toEqual({
      postgresql: { connection_url: 'postgres://u:p@db/vault?sslmode=disable', ha_enabled: 'true', max_parallel: 16 },
    });
    // Two listener blocks with different labels merge into one object keyed by label (HCL1 decoding).
    expect(p.listener).toEqual({
      tcp: { address: '0.0.0.0:8200', tls_disable: true },
      unix: { address: '/run/k.sock', socket_mode: '660' },
    });
    expect(p).toMatchObject({
      api_addr: 'http://10.0.0.1:8200',
      ui: false,
      ratio: -150,
      hex: 31,
      tags: ['a', 'b'],
      nested: { a: 1, b: { c: [1, 2] } },
    });
    expect(linesOf(p)).toMatchObject({ storage: 2, listener: 9, api_addr: 14, nested: 19 });
    expect(linesOf(p.listener as object)).toEqual({ tcp: 9, unix: 13 });
  });

  it('reads 0-prefixed integers as octal, as HCL1 (Go base prefixes): mode = 0640 is 416; JSON stays decimal', () => {
    expect(plain('mode = 0640\nneg = -017\nzero = 0\ndec = 640\nfloat = 0.5')).toEqual({
      mode: 0o640,
      neg: -0o17,
      zero: 0,
      dec: 640,
      float: 0.5,
    });
    expect(plain('{"mode": 416}')).toEqual({ mode: 416 });
  });

  it('keeps repeated keys with the same label as a list in source order', () => {
    const p = plain('seal "transit" { key_name = "a" }\nseal "transit" { key_name = "b" }\nx = 1\nx = 2\nx = 3');
    expect(p.seal).toEqual([{ transit: { key_name: 'a' } }, { transit: { key_name: 'b' } }]);
    expect(p.x).toEqual([1, 2, 3]);
  });

  it('nests several labels and accepts quoted keys and identifier labels', () => {
    const doc = parseHcl('a b "c d" { "quoted key" = "v" }');
    expect(doc.items[0]).toMatchObject({ key: 'a', labels: ['b', 'c d'], block: true });
    expect(hclToPlain(doc)).toEqual({ a: { b: { 'c d': { 'quoted key': 'v' } } } });
  });

  it('unescapes strings and keeps ${} interpolation verbatim', () => {
    expect(plain(String.raw`s = "a\"b\\c\n\t\u00e9\U0001F600 ` + '${foo("x")}"').s).toBe('a"b\\c\n\té😀 ${foo("x")}');
  });

  it('reads heredocs, with <<- removing the closing marker indentation', () => {
    const p = plain(
      'policy = <<EOT\npath "a" {\n  capabilities = ["read"]\n}\nEOT\nind = <<-EOF\n    one\n      two\n    EOF\nafter = 1\n',
    );
    expect(p.policy).toBe('path "a" {\n  capabilities = ["read"]\n}\n');
    expect(p.ind).toBe('one\n  two\n');
    expect(linesOf(p).after).toBe(10);
  });

  it('parses JSON documents into the same tree, with lines', () => {
    const doc = parseHcl('{\n  "storage": {"file": {"path": "/d"}},\n  "ui": true,\n  "n": null,\n  "l": [1, 2.5]\n}');
    expect(doc.items.map((i) => [i.key, i.line])).toEqual([
      ['storage', 2],
      ['ui', 3],
      ['n', 4],
      ['l', 5],
    ]);
    expect(hclToPlain(doc)).toEqual({ storage: { file: { path: '/d' } }, ui: true, n: null, l: [1, 2.5] });
  });

  it.each([
    ['a = "unterminated\n', 1, /string not terminated/],
    ['a = 1\nb "x" = 2', 2, /labels are only allowed on blocks/],
    ['a {\n b = 1\n', 3, /object opened at line 1 is not closed/],
    ['a = [1 2]', 1, /expected "," or "\]" in list/],
    ['a = bare', 1, /strings need double quotes/],
    ['a = 1\n\n  = 2', 3, /expected a key/],
    ['a = <<EOF\nno end\n', 1, /heredoc not terminated/],
    ['a = 1 /* open', 1, /comment not terminated/],
    ['a = 12abc', 1, /invalid number "12abc"/],
    ['x = "\\q"', 1, /invalid escape/],
    ['a = 1\n@', 2, /unexpected character "@"/],
    ['{"a": 1,}', 1, /expected a quoted key/],
    ['{"a": 1} extra', 1, /after the document/],
    ['{"a": 01}', 1, /invalid JSON number/],
  ])('reports %j at line %i', (src, line, why) => {
    let err: unknown;
    try {
      parseHcl(src);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(HclSyntaxError);
    expect((err as HclSyntaxError).line).toBe(line);
    expect((err as HclSyntaxError).message).toMatch(why);
    expect((err as HclSyntaxError).message).toMatch(new RegExp(`^line ${line}, column \\d+: `));
  });

  it('counts lines across block comments and CRLF line ends', () => {
    const doc = parseHcl('/* one\ntwo\nthree */\r\nkey = "v"\r\n');
    expect(doc.items[0]).toMatchObject({ key: 'key', line: 4, column: 1 });
  });
});
