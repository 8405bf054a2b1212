/**
 * Barrier key rotation as Vault serves it (vault/logical_system.go: pathRotate, pathKeyStatus,
 * pathRotateConfig; api docs sys/rotate, sys/key-status, sys/rotate/config). All three need sudo,
 * as in Vault. The keyring itself is storage/keyring-rotation.ts.
 */
import { invalid } from '../../framework/errors.js';
import { f, parseDuration } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** Vault's bounds: max_operations in [1,000,000, 2^32 * 0.9 rounded], interval 0 or >= 24h. */
const MIN_OPERATIONS = 1_000_000;
const MAX_OPERATIONS = 3_865_470_566;
const MIN_INTERVAL = 24 * 3600;

const initialized = (engine: SysParts) => engine.ops.initializedTime();

/** Seconds as Go's time.Duration String() (Vault answers `interval` so): 0s, 24h0m0s, 1h30m0s. */
function goDuration(secs: number): string {
  if (secs === 0) return '0s';
  const h = Math.floor(secs / 3600);
  const m = Math.floor((secs % 3600) / 60);
  const s = secs % 60;
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`;
}

/** sys/rotate, sys/key-status, sys/rotate/config. */
export const rotateRoutes: AnyRoute[] = [
  route({
    path: 'rotate',
    summary: 'Rotate the barrier key: new records are sealed under a new term, older terms still open',
    fields: {},
    sudo: true,
    operations: {
      update: async ({ engine }) => {
        await engine.ops.barrierKeys.rotate(initialized(engine));
      },
    },
  }),
  route({
    path: 'key-status',
    summary: 'The barrier key term in use: its number, install time and encryptions',
    fields: {},
    sudo: true,
    operations: {
      read: ({ engine }) => ({ data: { ...engine.ops.barrierKeys.status(initialized(engine)) } }),
    },
  }),
  route({
    path: 'rotate/config',
    summary: 'Read or set automatic barrier key rotation (by operation count or interval)',
    fields: {
      enabled: f.bool('Rotate automatically'),
      max_operations: f.int('Encryptions under one term before it is rotated (1,000,000 to 3,865,470,566)'),
      interval: f.any('Rotate a term this long after it was installed (duration, 24h or more; 0 for never)'),
    },
    sudo: true,
    operations: {
      read: ({ engine }) => {
        const c = engine.ops.barrierKeys.config();
        return { data: { enabled: c.enabled, max_operations: c.max_operations, interval: goDuration(c.interval) } };
      },
      update: async ({ engine, data }) => {
        const change: { enabled?: boolean; max_operations?: number; interval?: number } = {};
        if (data.enabled !== undefined) change.enabled = data.enabled;
        if (data.max_operations !== undefined) {
          if (data.max_operations < MIN_OPERATIONS || data.max_operations > MAX_OPERATIONS)
            throw invalid(
              'max_operations',
              `must be between ${MIN_OPERATIONS} and ${MAX_OPERATIONS}, got ${data.max_operations}`,
            );
          change.max_operations = data.max_operations;
        }
        if (data.interval !== undefined && data.interval !== '') {
          const secs = parseDuration('interval', data.interval);
          if (secs !== 0 && secs < MIN_INTERVAL) throw invalid('interval', `must be 0 or at least 24h, got ${secs}s`);
          change.interval = secs;
        }
        await engine.ops.barrierKeys.setConfig(change, initialized(engine));
      },
    },
  }),
];
