import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// Design note section 2: imports flow one way. crypto and storage depend on nothing of ours;
// framework on those; auth, audit, seal, sync and the engines on framework (never on server or cli);
// server on all of them; cli on route tables and framework types, never on server internals (the
// `keyhold server` command reaches the daemon through a dynamic import only).
const SRC = resolve(import.meta.dirname, '..', '..', '..', 'src');

/** Top-level area of a file under src/ ("engines", "cli", "main.ts"...). */
function areaOf(file: string): string {
  return relative(SRC, file).split('/')[0]!;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Static value imports (type-only imports and dynamic import() are not dependencies at load time). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^(import|export)\s+(?!type\b)[^;]*?\sfrom\s+'(\.[^']+)'/gms)) {
    out.push(resolve(dirname(file), m[2]!).replace(/\.js$/, '.ts'));
  }
  return out;
}

const ALLOWED: Record<string, string[]> = {
  crypto: [],
  storage: [],
  'version.ts': [],
  framework: ['storage', 'crypto'],
  auth: ['framework', 'storage', 'crypto'],
  seal: ['framework', 'storage', 'crypto', 'kms'],
  // External key providers (pkcs11, awskms): transit's managed keys and the HSM seal use them;
  // awskms connects through sync's network guard.
  kms: ['framework', 'storage', 'crypto', 'sync'],
  audit: ['framework', 'storage', 'crypto', 'auth'],
  sync: ['framework', 'storage', 'crypto'],
  // Metrics (issue 27): an observer the server feeds; it reads config syntax from framework.
  telemetry: ['framework', 'storage', 'crypto'],
  // The sys engine mounts the audit and OpenAPI routes; engines never reach server or cli.
  engines: ['framework', 'storage', 'crypto', 'auth', 'audit', 'docs', 'sync', 'kms', 'version.ts'],
  docs: ['framework', 'engines', 'sync', 'cli', 'version.ts', 'storage', 'crypto', 'auth', 'audit', 'kms'],
  cli: ['framework', 'engines', 'sync', 'docs', 'crypto', 'version.ts'],
  server: ['framework', 'storage', 'crypto', 'auth', 'audit', 'seal', 'engines', 'sync', 'kms', 'telemetry', 'version.ts'],
  'main.ts': ['cli'],
};

describe('import layering (design note section 2)', () => {
  const all = files(SRC);

  it('finds the source tree', () => {
    expect(all.length).toBeGreaterThan(50);
  });

  it('every static import goes to an allowed area', () => {
    const bad: string[] = [];
    for (const f of all) {
      const from = areaOf(f);
      const allowed = ALLOWED[from];
      expect(allowed, `area ${from} has no rule`).toBeDefined();
      for (const target of staticImports(f)) {
        const to = areaOf(target);
        if (to !== from && !allowed!.includes(to)) bad.push(`${relative(SRC, f)} -> ${relative(SRC, target)}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('the CLI never statically imports server internals', () => {
    const cli = all.filter((f) => areaOf(f) === 'cli' || areaOf(f) === 'main.ts');
    const hits = cli.flatMap((f) => staticImports(f).filter((t) => areaOf(t) === 'server').map((t) => `${relative(SRC, f)} -> ${relative(SRC, t)}`));
    expect(hits).toEqual([]);
  });
});
