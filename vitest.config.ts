import { defineConfig } from 'vitest/config';

// Integration tests spawn the built daemon (dist/), so `npm test` builds first (scripts/test.sh).
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
