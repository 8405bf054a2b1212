/**
 * `keyhold path-help PATH`: which route serves a path, its summary, operations and fields, from the
 * route tables (the shape of `vault path-help`).
 */
import type { FieldSpec } from '../framework/fields.js';
import { matchRoute, type AnyRoute, type Operation } from '../framework/route.js';
import { resolveMount } from './catalog.js';
import type { MountedRoutes } from './mounted-routes.js';
import { humanPath } from './route-paths.js';

/** The help of one path, as data (`--format json`) and rendered (table format). */
export interface PathHelp {
  request: string;
  mount: { path: string; type: string };
  route: string;
  summary: string;
  description?: string;
  operations: string[];
  unauthenticated: boolean;
  sudo: boolean;
  cli?: string;
  fields: Record<
    string,
    {
      type: string;
      description: string;
      in_path: boolean;
      required: boolean;
      sensitive: boolean;
      default?: unknown;
      choices?: string[];
    }
  >;
}

const METHODS: Record<Operation, string> = {
  read: 'GET',
  list: 'LIST',
  create: 'POST',
  update: 'POST',
  patch: 'PATCH',
  delete: 'DELETE',
};

/** Find the route of `fullPath` among `mounts`; null when no mount or route matches. */
export function findPath(
  mounts: readonly MountedRoutes[],
  fullPath: string,
): { mount: MountedRoutes; route: AnyRoute; sub: string } | null {
  const clean = fullPath.replace(/^\/+/, '').replace(/^v1\//, '');
  const mount = resolveMount(mounts, clean);
  if (!mount) return null;
  const sub = (clean + (clean.endsWith('/') ? '' : '/')).slice(mount.path.length).replace(/\/+$/, '');
  const hit = matchRoute(mount.routes, sub);
  return hit ? { mount, route: hit.route, sub } : null;
}

/** The help data of a matched route. */
export function pathHelp(request: string, mount: MountedRoutes, route: AnyRoute): PathHelp {
  const ops = (Object.keys(route.operations) as Operation[]).filter((o) => route.operations[o]);
  const fields: PathHelp['fields'] = {};
  for (const [name, field] of Object.entries(route.fields as Record<string, { spec: FieldSpec }>).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    const s = field.spec;
    const d = s.default !== undefined && !Buffer.isBuffer(s.default) ? s.default : undefined;
    fields[name] = {
      type: s.kind,
      description: s.help,
      in_path: route.params.includes(name),
      required: Boolean(s.required) && d === undefined,
      sensitive: Boolean(s.sensitive),
      ...(d !== undefined ? { default: d } : {}),
      ...(s.choices ? { choices: [...s.choices] } : {}),
    };
  }
  return {
    request: request.replace(/^\/+/, ''),
    mount: { path: mount.path, type: mount.type },
    route: route.path,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    operations: ops.map((o) => `${METHODS[o]} (${o})`),
    unauthenticated: Boolean(route.unauthenticated),
    sudo: Boolean(route.sudo),
    ...(route.cli ? { cli: `keyhold ${route.cli.command}` } : {}),
    fields,
  };
}

function wrap(text: string, indent: string, width = 78): string[] {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && indent.length + line.length + 1 + word.length > width) {
      out.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(indent + line);
  return out;
}

/** Render like `vault path-help`: request, matching route, summary, parameters, description. */
export function renderPathHelp(h: PathHelp): string {
  const lines = [
    `Request:        ${h.request}`,
    `Mount:          ${h.mount.path} (${h.mount.type})`,
    `Matching Route: ${humanPath(h.route) || '(mount root)'}`,
    `Operations:     ${h.operations.join(', ')}`,
  ];
  const flags = [h.unauthenticated && 'no token needed', h.sudo && 'needs sudo'].filter(Boolean);
  if (flags.length) lines.push(`Access:         ${flags.join(', ')}`);
  if (h.cli) lines.push(`CLI:            ${h.cli}`);
  lines.push('', ...wrap(h.summary, ''), '', '## PARAMETERS', '');
  const names = Object.keys(h.fields);
  if (!names.length) lines.push('    (none)', '');
  for (const n of names) {
    const f = h.fields[n]!;
    const notes = [
      f.type,
      f.in_path ? 'in the path' : '',
      f.required ? 'required' : '',
      f.sensitive ? 'sensitive' : '',
      f.default !== undefined ? `default ${JSON.stringify(f.default)}` : '',
      f.choices ? `one of ${f.choices.join(', ')}` : '',
    ].filter(Boolean);
    lines.push(`    ${n} (${notes.join('; ')})`, '', ...wrap(f.description, '        '), '');
  }
  if (h.description) lines.push('## DESCRIPTION', '', ...wrap(h.description, ''), '');
  return lines.join('\n').replace(/\n+$/, '\n');
}
