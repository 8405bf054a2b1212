/**
 * Templates and data rendered by both keyhold's Go-template engine and Go's own text/template
 * (test/support/go-template): the outputs must be byte-identical, and both must fail where one does.
 * Includes the examples of Vault Agent's and consul-template's documentation (their shapes; the
 * secret data is ours).
 */
export interface TemplateCase {
  name: string;
  template: string;
  data?: unknown;
  missingkey?: 'error';
  left?: string;
  right?: string;
  secrets?: Record<string, Record<string, unknown>>;
  env?: Record<string, string>;
}

const kv = {
  data: {
    password: 'p@ss "w" <&>',
    user: 'app',
    port: 5432,
    ratio: 0.25,
    big: 12345678,
    tiny: 0.00001,
    on: true,
    tags: ['a', 'b', 'c'],
    nested: { z: 1, a: [1, 'x', null], m: { k: 'v' } },
    empty: '',
    nul: null,
    csv: ' a,b ,c ',
    b64: 'aGVsbG8gd29ybGQ=',
    json: '{"b":[1,2],"a":"x<y"}',
  },
  metadata: { version: 3, created_time: '2026-01-01T00:00:00Z' },
};
const secrets = {
  'secret/data/app': kv,
  'secret/app': kv.data,
  'database/creds/ro': { username: 'v-ro-1', password: 'pw-1' },
};

export const CASES: TemplateCase[] = [
  // Text, trim markers, comments.
  { name: 'text', template: 'plain text\nwith lines\n' },
  { name: 'trim', template: 'a  \n {{- "b" -}} \n  c {{- /* comment */ -}} d {{/* c2 */}} e' },
  { name: 'trim-newlines', template: '{{ "x" }}\n{{- "y" }}\n  {{- "z" -}}\n\nend' },
  { name: 'comment-only', template: '{{/* nothing */}}' },
  // Fields, maps, missing keys, nil.
  {
    name: 'fields',
    template: '{{ .a }} {{ .b.c }} {{ .b.d.e }} {{ .missing }} {{ .missing.deeper }} {{ .nul }}',
    data: { a: 'x', b: { c: 1.5, d: { e: false } }, nul: null },
  },
  { name: 'nil-chain', template: '{{ .nul.x }}', data: { nul: null } },
  {
    name: 'print-composites',
    template: '{{ . }}|{{ .list }}|{{ .m }}|{{ .e }}|{{ .el }}',
    data: { list: [1, 'two', true, null, { k: 'v' }], m: { b: 2, a: 1, A: 0, _: [] }, e: {}, el: [] },
  },
  {
    name: 'floats',
    template: '{{ .a }} {{ .b }} {{ .c }} {{ .d }} {{ .e }} {{ .f }} {{ .g }} {{ .h }} {{ .i }}',
    data: { a: 0, b: -0.5, c: 100000, d: 1000000, e: 123456.789, f: 1e21, g: 0.0001, h: 0.00001234, i: -7e-10 },
  },
  {
    name: 'literals',
    template:
      '{{ 1 }} {{ -2 }} {{ 0x1F }} {{ 017 }} {{ 1.5 }} {{ 1e3 }} {{ 2.0 }} {{ true }} {{ "s\\t\\"q\\"" }} {{ `raw\\n` }} {{ \'a\' }} {{ 1_000 }}',
  },
  { name: 'missingkey-error', template: '{{ .a }} {{ .b }}', data: { a: 1 }, missingkey: 'error' },
  { name: 'missingkey-error-nested', template: 'x{{ .a.b.c }}', data: { a: {} }, missingkey: 'error' },
  { name: 'missingkey-error-index', template: '{{ index . "nope" }}', data: { a: 1 }, missingkey: 'error' },
  { name: 'field-on-string', template: '{{ .a.b }}', data: { a: 'str' } },
  // Control structures.
  {
    name: 'if-else',
    template:
      '{{ if .t }}T{{ else }}F{{ end }}{{ if .f }}T{{ else if .t }}ET{{ else }}F{{ end }}{{ if .z }}z{{ end }}{{ if .s }}s{{ end }}{{ if .l }}l{{ end }}{{ if .m }}m{{ end }}',
    data: { t: true, f: false, z: 0, s: '', l: [], m: {} },
  },
  {
    name: 'if-else-chain',
    template: '{{ if eq .n 1.0 }}one{{ else if eq .n 2.0 }}two{{ else if eq .n 3.0 }}three{{ else }}many{{ end }}',
    data: { n: 3 },
  },
  {
    name: 'with',
    template:
      '{{ with .a }}[{{ . }}]{{ else }}none{{ end }}{{ with .missing }}x{{ else }}-{{ end }}{{ with $x := .a }}{{ $x }}{{ end }}',
    data: { a: 'A' },
  },
  {
    name: 'range-slice',
    template:
      '{{ range .l }}<{{ . }}>{{ end }}{{ range $i, $e := .l }}{{ $i }}={{ $e }};{{ end }}{{ range $e := .l }}{{ $e }}{{ end }}',
    data: { l: ['x', 'y', 'z'] },
  },
  {
    name: 'range-map-sorted',
    template: '{{ range $k, $v := . }}{{ $k }}:{{ $v }},{{ end }}',
    data: { b: 2, a: 1, c: { d: 3 }, B: 0, é: 'e' },
  },
  {
    name: 'range-else',
    template: '{{ range .l }}x{{ else }}empty{{ end }}{{ range .missing }}x{{ else }}nothing{{ end }}',
    data: { l: [] },
  },
  {
    name: 'range-break-continue',
    template:
      '{{ range $i, $e := .l }}{{ if eq $e "skip" }}{{ continue }}{{ end }}{{ if eq $e "stop" }}{{ break }}{{ end }}{{ $e }}{{ end }}',
    data: { l: ['a', 'skip', 'b', 'stop', 'c'] },
  },
  { name: 'range-string-error', template: '{{ range .s }}{{ end }}', data: { s: 'abc' } },
  {
    name: 'nested-range',
    template: '{{ range $k, $v := .m }}{{ $k }}[{{ range $v }}{{ . }}{{ $k }}{{ end }}]{{ end }}',
    data: { m: { x: [1, 2], y: ['a'] } },
  },
  // Variables.
  {
    name: 'variables',
    template:
      '{{ $x := 1 }}{{ $x }}{{ $x = 2 }}{{ $x }}{{ if true }}{{ $x = 3 }}{{ $y := 9 }}{{ $y }}{{ end }}{{ $x }}{{ $ }}{{ $.a }}',
    data: { a: 'A' },
  },
  {
    name: 'variable-scope-range',
    template: '{{ $v := "out" }}{{ range .l }}{{ $v = . }}{{ end }}{{ $v }}',
    data: { l: ['a', 'b'] },
  },
  // Pipelines and functions.
  {
    name: 'pipelines',
    template:
      '{{ .a | printf "%s!" }} {{ "x" | printf "%s-%s" "y" }} {{ .n | printf "%.2f" }} {{ (printf "%d" 42) | len }}',
    data: { a: 'hi', n: 3.14159 },
  },
  {
    name: 'printf-round',
    template: '{{ printf "%.1f %.1f %.2f %.0f %.0f %.0f %.3f" 0.25 0.35 1.005 0.5 1.5 2.5 -0.0625 }}',
  },
  {
    name: 'printf-verbs',
    template:
      '{{ printf "%v|%d|%5s|%-5s|%05d|%x|%X|%q|%t|%%|%.3s|%8.3f|%e|%g|%T|%T|%T" .f 42 "ab" "ab" 42 "hi" 255 "q\\"\\n" true "abcdef" 3.14159 1234.5678 0.000012 .f 42 .m }}',
    data: { f: 2.5, m: {} },
  },
  { name: 'printf-bad', template: '{{ printf "%d %s" "str" 5 }}|{{ printf "%s" }}|{{ printf "x" 1 }}' },
  {
    name: 'print-println',
    template: '{{ print 1 2 "a" "b" 3 }}|{{ println "a" 1 2 }}|{{ print .f .g }}',
    data: { f: 1.5, g: 2 },
  },
  {
    name: 'and-or-not',
    template:
      '{{ and 1 0 2 }} {{ and 1 2 }} {{ or 0 "" "x" }} {{ or 0 "" }} {{ not 0 }} {{ not "a" }} {{ and .missing .x }} {{ or .missing "def" }}',
    data: {},
  },
  {
    name: 'len-index',
    template:
      '{{ len .s }} {{ len .l }} {{ len .m }} {{ index .l 1 }} {{ index .m "k" }} {{ index .m "none" }} {{ index .n "a" 0 }} {{ len "héllo" }}',
    data: { s: 'abc', l: [1, 2, 3], m: { k: 'v' }, n: { a: ['deep'] } },
  },
  { name: 'index-out-of-range', template: '{{ index .l 5 }}', data: { l: [1] } },
  { name: 'index-float', template: '{{ index .l 1.0 }}', data: { l: [1, 2] } },
  {
    name: 'slice',
    template: '{{ slice .s 1 3 }} {{ slice .l 1 }} {{ slice .s }}',
    data: { s: 'abcdef', l: [1, 2, 3] },
  },
  {
    name: 'comparisons',
    template:
      '{{ eq .a "x" }} {{ eq .a "y" "x" }} {{ ne .n 1.0 }} {{ lt .n 5.0 }} {{ le 2 2 }} {{ gt "b" "a" }} {{ ge 1.5 2.5 }} {{ eq true true }}',
    data: { a: 'x', n: 3 },
  },
  { name: 'compare-int-float', template: '{{ eq .n 3 }}', data: { n: 3 } },
  { name: 'compare-map', template: '{{ eq .m .m }}', data: { m: { a: 1 } } },
  {
    name: 'html-js-urlquery',
    template:
      '{{ html "<a href=\\"x\\">&\'" }}|{{ js "it\'s <b>\\"q\\"\\\\ =" }}|{{ urlquery "a b&c=d/é~!*" }}|{{ html 1 2 }}',
    data: {},
  },
  {
    name: 'parens-chain',
    template: '{{ (index .l 0).name }} {{ ($x := .m).a }} {{ (.m).a }}',
    data: { l: [{ name: 'first' }], m: { a: 'A' } },
  },
  {
    name: 'define-template',
    template:
      '{{ define "row" }}<{{ .k }}={{ .v }}>{{ end }}{{ range .rows }}{{ template "row" . }}{{ end }}{{ block "b" .x }}[{{ . }}]{{ end }}',
    data: {
      rows: [
        { k: 'a', v: 1 },
        { k: 'b', v: 2 },
      ],
      x: 'blk',
    },
  },
  {
    name: 'delimiters',
    template: '[[ .a ]] {{ .a }} [[- " trimmed " -]] [[ if .a ]]yes[[ end ]]',
    data: { a: 'A' },
    left: '[[',
    right: ']]',
  },
  { name: 'multiline-action', template: '{{ printf "%s-%s"\n  .a\n  .b }}', data: { a: 1, b: 2 } },
  {
    name: 'unicode',
    template: '{{ .s }} {{ len .s }} {{ printf "%q" .s }} {{ printf "%x" .s }}',
    data: { s: 'héllo 世界 \u0007' },
  },
  { name: 'err-printf-type', template: '{{ printf 1 }}' },
  { name: 'err-len-number', template: 'x\n  {{ len .n }}', data: { n: 3 } },
  { name: 'err-not-arity', template: '{{ not 1 2 }}' },
  { name: 'err-index-map-int', template: '{{ index .m 1 }}', data: { m: { a: 1 } } },
  { name: 'err-split-number', template: '{{ .n | split "," }}', data: { n: 1 } },
  { name: 'err-template-missing', template: '{{ template "nope" }}' },
  { name: 'err-dot-arg', template: '{{ . 1 }}', data: {} },
  { name: 'err-var-field', template: '{{ $x := .a }}{{ $x.b.c }}', data: { a: { b: 'str' } } },
  { name: 'contains-mixed', template: '{{ "abc" | contains 1 }} {{ .l | contains 1.0 }}', data: { l: [1, 2] } },
  // Parse errors (both must fail).
  { name: 'err-unclosed', template: 'a {{ if .x }} b' },
  { name: 'err-undefined-var', template: '{{ $nope }}' },
  { name: 'err-unknown-func', template: '{{ nosuchfunc 1 }}' },
  { name: 'err-bad-end', template: '{{ end }}' },
  { name: 'err-unclosed-action', template: '{{ .a ' },
  { name: 'err-non-exec', template: '{{ .a | "x" }}' },
  { name: 'err-arg-to-field', template: '{{ .a 1 }}', data: { a: 'x' } },
  // consul-template functions.
  {
    name: 'ct-strings',
    template:
      '{{ "  x y  " | trimSpace }}|{{ "A,B,C" | split "," }}|{{ "p q r" | split " " | join "-" }}|{{ "Hello" | toLower }}|{{ "Hello" | toUpper }}|{{ "a-b-c" | replaceAll "-" "+" }}|{{ "hello" | contains "ell" }}|{{ .l | contains "y" }}|{{ .l | contains "q" }}|{{ range " a , b " | split "," }}[{{ . }}]{{ end }}|{{ "" | split "," | len }}',
    data: { l: ['x', 'y'] },
  },
  { name: 'ct-join-needs-strings', template: '{{ .l | join "-" }}', data: { l: ['x', 'y'] } },
  {
    name: 'ct-base64',
    template: '{{ "héllo wörld" | base64Encode }}|{{ "aGVsbG8gd29ybGQ=" | base64Decode }}|{{ base64Encode "" }}',
  },
  { name: 'ct-base64-bad', template: '{{ "not base64!" | base64Decode }}' },
  {
    name: 'ct-json',
    template: '{{ .m | toJSON }}|{{ .l | toJSON }}|{{ "x<y&z" | toJSON }}|{{ .f | toJSON }}|{{ .m | toJSONPretty }}',
    data: { m: { b: [1, 2.5, 'x', null, true], a: { z: '<>' }, e: {}, el: [] }, l: [1e21, 1e-7, 123456789], f: 0.1 },
  },
  {
    name: 'ct-parsejson',
    template: '{{ with $d := .j | parseJSON }}{{ $d.a }} {{ index $d.b 1 }} {{ $d }}{{ end }}|{{ "" | parseJSON }}',
    data: { j: '{"a":"x","b":[1,2],"c":{"d":null}}' },
  },
  { name: 'ct-env', template: '{{ env "HOME_X" }}|{{ env "UNSET_X" }}|', env: { HOME_X: '/home/x' } },
  // Vault Agent / consul-template documentation shapes.
  {
    name: 'doc-kv2',
    template:
      '{{ with secret "secret/data/app" }}\nuser={{ .Data.data.user }}\npassword={{ .Data.data.password }}\nversion={{ .Data.metadata.version }}\n{{ end }}',
    secrets,
  },
  {
    name: 'doc-kv1',
    template:
      '{{ with secret "secret/app" -}}\nexport APP_USER="{{ .Data.user }}"\nexport APP_PORT="{{ .Data.port }}"\n{{- end }}',
    secrets,
  },
  {
    name: 'doc-database-creds',
    template:
      '{{- with secret "database/creds/ro" -}}\npostgresql://{{ .Data.username }}:{{ .Data.password }}@db:5432/app\n{{- end }}',
    secrets,
  },
  {
    name: 'doc-range-data',
    template:
      '{{ with secret "secret/data/app" }}{{ range $k, $v := .Data.data }}{{ $k }}={{ $v }}\n{{ end }}{{ end }}',
    secrets,
  },
  {
    name: 'doc-json-config',
    template: '{{ with secret "secret/data/app" }}{{ .Data.data | toJSONPretty }}{{ end }}',
    secrets,
  },
  {
    name: 'doc-csv-tags',
    template:
      '{{ with secret "secret/data/app" }}{{ range .Data.data.csv | split "," }}- {{ . | trimSpace }}\n{{ end }}{{ .Data.data.b64 | base64Decode }} {{ (.Data.data.json | parseJSON).a }}{{ end }}',
    secrets,
  },
  {
    name: 'doc-missing-secret',
    template: '{{ with secret "secret/data/none" }}{{ .Data.data.x }}{{ else }}no secret{{ end }}',
    secrets,
  },
  {
    name: 'doc-missing-field-error',
    template: '{{ with secret "secret/data/app" }}{{ .Data.data.nope }}{{ end }}',
    secrets,
    missingkey: 'error',
  },
  { name: 'doc-struct-field-error', template: '{{ with secret "secret/data/app" }}{{ .Nope }}{{ end }}', secrets },
  {
    name: 'doc-if-eq',
    template:
      '{{ with secret "secret/data/app" }}{{ if eq .Data.data.user "app" }}is app{{ end }}{{ if .Data.data.on }} on{{ end }}{{ if .Data.data.empty }} empty{{ end }}{{ end }}',
    secrets,
  },
  {
    name: 'doc-printf-secret',
    template:
      '{{ with secret "secret/data/app" }}{{ printf "%s:%v:%.1f" .Data.data.user .Data.data.port .Data.data.ratio }} {{ .Data.data.big }} {{ .Data.data.tiny }} {{ .Data.data.nested }}{{ end }}',
    secrets,
  },
];
