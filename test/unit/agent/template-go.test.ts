/**
 * keyhold's Go-template engine against Go's own text/template: every case of template-cases.ts is
 * rendered by both: outputs must be byte-identical, and where Go fails (parse and execution errors)
 * keyhold must fail with the same message (template, line, column, node and reason). The Go helper
 * (test/support/go-template, standard library only) is built offline into a temporary directory
 * with Debian's golang-go (scripts/setup-test-env.sh installs it); without `go` the test is skipped,
 * saying why.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { GoTemplate } from '../../../src/agent/template/exec.js';
import { consulTemplateFunctions } from '../../../src/agent/template/functions.js';
import { GoStruct } from '../../../src/agent/template/values.js';
import { CASES, type TemplateCase } from './template-cases.js';

const SRC = resolve(import.meta.dirname, '..', '..', 'support', 'go-template');
const haveGo = spawnSync('go', ['version'], { encoding: 'utf8' }).status === 0;
if (!haveGo)
  console.warn(
    'template-go.test.ts: skipped, `go` is not installed (Debian: apt-get install golang-go; scripts/setup-test-env.sh does it)',
  );

let dir: string;
let goResults: { out: string; err: string }[] = [];

beforeAll(() => {
  if (!haveGo) return;
  dir = mkdtempSync(join(tmpdir(), 'kh-gotpl-'));
  copyFileSync(join(SRC, 'main.go'), join(dir, 'main.go'));
  copyFileSync(join(SRC, 'go.mod'), join(dir, 'go.mod'));
  const env = {
    ...process.env,
    GOTOOLCHAIN: 'local',
    GOPROXY: 'off',
    GOFLAGS: '',
    CGO_ENABLED: '0',
    GOCACHE: join(dir, 'cache'),
    GOPATH: join(dir, 'gopath'),
  };
  execFileSync('go', ['build', '-o', join(dir, 'gotpl'), '.'], { cwd: dir, env, stdio: 'pipe' });
  const out = execFileSync(join(dir, 'gotpl'), { input: JSON.stringify(CASES), encoding: 'utf8' });
  goResults = JSON.parse(out);
}, 180_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function secretFn(c: TemplateCase) {
  return (path: unknown) => {
    const d = c.secrets?.[String(path)];
    if (!d) return null;
    return new GoStruct('*main.Secret', {
      RequestID: '',
      LeaseID: '',
      LeaseDuration: 0n,
      Renewable: false,
      Data: d,
      Warnings: [],
    });
  };
}

function ours(c: TemplateCase): { out: string; err: string } {
  try {
    const t = new GoTemplate(
      c.name,
      c.template,
      { ...consulTemplateFunctions(c.env ?? {}), secret: secretFn(c) },
      { leftDelim: c.left, rightDelim: c.right, errorOnMissingKey: c.missingkey === 'error' },
    );
    return { out: t.execute(c.data ?? null), err: '' };
  } catch (e) {
    return { out: '', err: (e as Error).message };
  }
}

describe.skipIf(!haveGo)("the renderer matches Go's text/template byte for byte", () => {
  test.each(CASES.map((c, i) => [c.name, i] as const))('%s', (_name, i) => {
    const c = CASES[i]!;
    const go = goResults[i]!;
    const mine = ours(c);
    if (go.err) {
      // The same message: template, line, column, the node, the reason.
      expect(mine.err).toBe(go.err);
    } else {
      expect(mine.err).toBe('');
      expect(mine.out).toBe(go.out);
    }
  });
});
