import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Design note section 2: imports flow one way. crypto and storage depend on nothing of ours;
// framework on those; auth, audit, seal, sync, kms and the engines on framework (never on server,
// cli or docs); cli on route tables and framework types; docs on the route tables and the CLI program;
// server on all of them but the CLI. Type-only imports count: a type
// reaching upwards is as much a seam crossed as a value. Dynamic `import()` is not counted (the
// `keyhold server` command and the CLI's doc generators load lazily, at the moment they run).
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

/** Every static import and re-export of our own files (`import type` and `export ... from` included). */
function staticImports(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out = new Set<string>();
  for (const st of source.statements) {
    const spec =
      (ts.isImportDeclaration(st) || ts.isExportDeclaration(st)) &&
      st.moduleSpecifier &&
      ts.isStringLiteral(st.moduleSpecifier)
        ? st.moduleSpecifier.text
        : null;
    if (spec?.startsWith('.')) out.add(resolve(dirname(file), spec).replace(/\.js$/, '.ts'));
  }
  return [...out];
}

const ALLOWED: Record<string, string[]> = {
  crypto: [],
  storage: [],
  'version.ts': [],
  // The single executable's native-addon loader and embedded scripts (issue 26): node: modules only.
  native: [],
  'build-info.ts': ['version.ts'],
  framework: ['storage', 'crypto'],
  auth: ['framework', 'storage', 'crypto', 'native'],
  sync: ['framework', 'storage', 'crypto'],
  // Metrics (issue 27): an observer the server feeds; it reads config syntax from framework.
  telemetry: ['framework', 'storage', 'crypto'],
  // External key providers (pkcs11, awskms): transit's managed keys (through framework's ManagedKeys)
  // and the HSM seal use them; awskms connects through sync's network guard.
  kms: ['framework', 'storage', 'crypto', 'sync', 'native'],
  // Rate-limit quotas (issue 28): records behind the barrier, limiters, the index the router asks.
  quotas: ['framework', 'storage'],
  seal: ['framework', 'storage', 'crypto', 'kms'],
  audit: ['framework', 'storage', 'crypto', 'auth'],
  // Engines never reach server, cli or docs: the server hands the sys engine its OpenAPI generator.
  // The sys routes drive the seal (sys/seal-status, rekey) through types of seal/.
  engines: ['framework', 'storage', 'crypto', 'auth', 'audit', 'seal', 'sync', 'kms', 'quotas', 'version.ts'],
  // The generators read the route tables and the CLI program. The CLI loads them lazily (dynamic
  // import) for `completion`, `openapi --offline` and `path-help`; its help text (examples, topics)
  // is its own.
  docs: ['framework', 'engines', 'sync', 'cli', 'version.ts', 'storage', 'crypto', 'auth', 'audit', 'kms'],
  cli: ['framework', 'engines', 'sync', 'crypto', 'version.ts', 'build-info.ts', 'native'],
  server: [
    'framework',
    'storage',
    'crypto',
    'auth',
    'audit',
    'seal',
    'engines',
    'sync',
    'kms',
    'docs',
    'quotas',
    'telemetry',
    'version.ts',
  ],
  // keyhold agent: a client of the server (its own HTTP client), sharing the CLI's child-process
  // handling; the CLI loads it by dynamic import only.
  agent: ['framework', 'cli'],
  'main.ts': ['cli'],
};

const all = files(SRC);
const graph = new Map(all.map((f) => [f, staticImports(f)] as const));

/** Import cycles between files: the strongly connected components with more than one file (Tarjan). */
function cycles(): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(relative(SRC, w));
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('import layering (design note section 2)', () => {
  it('finds the source tree and reads type-only imports', () => {
    expect(all.length).toBeGreaterThan(50);
    // framework/route.ts imports its RequestContext type only: the reader must see type imports.
    const route = join(SRC, 'framework', 'route.ts');
    expect(graph.get(route)).toContain(join(SRC, 'framework', 'context.ts'));
  });

  it('every import (type-only included) goes to an allowed area', () => {
    const bad: string[] = [];
    for (const [f, targets] of graph) {
      const from = areaOf(f);
      const allowed = ALLOWED[from];
      expect(allowed, `area ${from} has no rule`).toBeDefined();
      for (const target of targets) {
        const to = areaOf(target);
        if (to !== from && !allowed!.includes(to)) bad.push(`${relative(SRC, f)} -> ${relative(SRC, target)}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it('no two areas import each other', () => {
    const pairs = new Set<string>();
    for (const [f, targets] of graph)
      for (const t of targets) if (areaOf(f) !== areaOf(t)) pairs.add(`${areaOf(f)} -> ${areaOf(t)}`);
    const both = [...pairs].filter((p) => {
      const [a, b] = p.split(' -> ');
      return a! < b! && pairs.has(`${b} -> ${a}`);
    });
    expect(both).toEqual([]);
  });

  it('no import cycles between files', () => {
    expect(cycles()).toEqual([]);
  });

  it('the CLI never imports server internals', () => {
    const cli = all.filter((f) => areaOf(f) === 'cli' || areaOf(f) === 'main.ts');
    const hits = cli.flatMap((f) =>
      graph
        .get(f)!
        .filter((t) => areaOf(t) === 'server')
        .map((t) => `${relative(SRC, f)} -> ${relative(SRC, t)}`),
    );
    expect(hits).toEqual([]);
  });

  it('an engine module index assembles the module and holds no instance class', () => {
    const indexes = all.filter((f) => f.endsWith('/index.ts') && (areaOf(f) === 'engines' || areaOf(f) === 'sync'));
    expect(indexes.length).toBeGreaterThan(3);
    const classes = indexes.flatMap((f) => {
      const source = ts.createSourceFile(f, readFileSync(f, 'utf8'), ts.ScriptTarget.Latest, false);
      return source.statements.filter(ts.isClassDeclaration).map((c) => `${relative(SRC, f)}: ${c.name?.text}`);
    });
    expect(classes).toEqual([]);
  });
});
