import { defineConfig } from 'vitest/config';

// Integration tests spawn the built daemon (dist/), so `npm test` builds first (scripts/test.sh).
// Route tests (test/unit/routes/) run a real Router and Core in process (test/support/harness.ts):
// each file builds its own Core, so those files share a worker's loaded modules (isolate: false)
// instead of loading the whole source tree again per file, which was most of their time.
const ROUTES = 'test/unit/routes/**/*.test.ts';

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'routes', include: [ROUTES], isolate: false } },
      {
        extends: true,
        test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [ROUTES, '**/node_modules/**'] },
      },
    ],
  },
});
