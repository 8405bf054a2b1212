/**
 * `GET sys/metrics` (Vault's in-memory sink JSON) and `GET sys/metrics?format=prometheus` (text
 * exposition format 0.0.4), as Vault serves them (http/sys_metrics.go, vault/logical_system.go
 * pathMetrics): a token with read on sys/metrics, unless a listener sets
 * `telemetry { unauthenticated_metrics_access = true }`.
 */
import { KeyholdError, invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

/** Content type Prometheus expects of the text format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** The sys/metrics route. */
export const metricsRoutes: AnyRoute[] = [
  route({
    path: 'metrics',
    standby: 'local', // every node reports its own metrics
    summary: 'Metrics of this node: JSON, or Prometheus text with format=prometheus',
    description:
      'Needs a `telemetry` stanza in the server config. Prometheus output needs prometheus_retention_time > 0 (default 24h).',
    fields: { format: f.string('Output format: "prometheus", or empty for JSON') },
    unauthenticatedWhen: ({ engine }) => engine.ops.telemetry?.unauthenticatedAccess === true,
    operations: {
      read: async ({ engine, data }) => {
        const t = engine.ops.telemetry;
        if (!t)
          throw invalid(
            'telemetry is not enabled: add a `telemetry { prometheus_retention_time = "24h" }` stanza to the server config',
          );
        const onError = (e: unknown) =>
          engine.ops.logger.warn('a metrics collector failed', { error: (e as Error)?.message });
        const format = data.format ?? '';
        if (format === 'prometheus') {
          const text = await t.prometheus(onError);
          // Vault: "prometheus is not enabled" when prometheus_retention_time is 0.
          if (text === null) throw new KeyholdError('invalid', 'prometheus is not enabled');
          return { raw: { contentType: PROMETHEUS_CONTENT_TYPE, body: text, status: 200 } };
        }
        if (format !== '') throw invalid('format', `must be "prometheus" or empty, got "${format}"`);
        return {
          raw: { contentType: 'application/json', body: JSON.stringify(await t.json(onError)) + '\n', status: 200 },
        };
      },
    },
  }),
];
