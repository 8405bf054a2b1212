/**
 * `sys/loggers`, `sys/loggers/:name` (Vault 1.13+: change log levels at runtime; DELETE returns to
 * the configured level) and `sys/monitor` (stream log lines to the caller at a level and format of
 * its own). All root-protected (sudo), as Vault protects them.
 */
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { jsonLine, levelOf, standardLine, type Level, type LogControl } from '../../framework/log-control.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';

/** What these routes need of the core. */
export interface LogParts {
  /** The daemon's log control (absent where the core was built without one). */
  readonly logs?: LogControl;
}

const route = routesFor<LogParts>();

function control(engine: LogParts): LogControl {
  if (!engine.logs) throw invalid('runtime log control is not available on this node');
  return engine.logs;
}

function level(v: unknown, field = 'level'): Level {
  if (typeof v !== 'string' || v === '') throw invalid(field, 'is required: debug, info, warn, error or off');
  const l = levelOf(v);
  if (!l)
    throw invalid(
      field,
      `"${v.slice(0, 32)}" is not a level; use debug, info, warn, error or off (keyhold has no trace level)`,
    );
  return l;
}

/** The loggers and monitor routes. */
export const loggersRoutes: AnyRoute[] = [
  route({
    path: 'loggers',
    summary: 'Read or set the level of every logger; DELETE returns them to the configured level',
    fields: { level: f.string('debug, info, warn, error or off') },
    sudo: true,
    operations: {
      read: ({ engine }) => ({ data: control(engine).levels() }),
      update: ({ engine, data }) => {
        control(engine).setLevel(null, level(data.level));
      },
      delete: ({ engine }) => {
        control(engine).reset(null);
      },
    },
  }),
  route({
    path: 'loggers/:name',
    summary: 'Read or set the level of one logger; DELETE returns it to the configured level',
    fields: { name: f.name('Logger name (see sys/loggers)'), level: f.string('debug, info, warn, error or off') },
    sudo: true,
    operations: {
      read: ({ engine, data }) => {
        const c = control(engine);
        if (!c.has(data.name))
          throw invalid('name', `no logger named "${data.name}"; loggers: ${Object.keys(c.levels()).join(', ')}`);
        return { data: { [data.name]: c.levels()[data.name] } };
      },
      update: ({ engine, data }) => {
        const c = control(engine);
        if (!c.has(data.name))
          throw invalid('name', `no logger named "${data.name}"; loggers: ${Object.keys(c.levels()).join(', ')}`);
        c.setLevel(data.name, level(data.level));
      },
      delete: ({ engine, data }) => {
        const c = control(engine);
        if (!c.has(data.name)) throw invalid('name', `no logger named "${data.name}"`);
        c.reset(data.name);
      },
    },
  }),
  route({
    path: 'monitor',
    summary: 'Stream log lines (text/plain) until the caller disconnects',
    fields: {
      log_level: f.string('Lowest level streamed (default info)'),
      log_format: f.string('standard (default) or json'),
    },
    sudo: true,
    operations: {
      read: ({ engine, data }) => {
        const c = control(engine);
        const lvl = data.log_level === undefined || data.log_level === '' ? 'info' : level(data.log_level, 'log_level');
        const format = (data.log_format ?? 'standard') || 'standard';
        if (format !== 'standard' && format !== 'json')
          throw invalid('log_format', `must be standard or json, got "${format.slice(0, 32)}"`);
        const render = format === 'json' ? jsonLine : standardLine;
        return {
          data: null,
          stream: {
            contentType: 'text/plain; charset=utf-8',
            start(out) {
              let open = true;
              const stop = c.monitor(
                lvl,
                (rec) => {
                  if (open && !out.write(render(rec))) stop();
                },
                () => {
                  open = false;
                  out.end();
                },
              );
              out.onClose(() => {
                open = false;
                stop();
              });
            },
          },
        };
      },
    },
  }),
];
