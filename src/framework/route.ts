/**
 * Routes are data (design note section 1): one value per endpoint, read by the router, the ACL,
 * the CLI and the doc generators.
 */
import type { Fields, Infer } from './fields.js';
import type { Operation, RequestContext } from './context.js';

export type { Operation } from './context.js';

/** What a handler returns; `undefined` renders 204 (writes) or 404 (reads/lists), as Vault does. */
export interface Reply {
  data?: Record<string, unknown> | null;
  warnings?: string[];
  /** Override the HTTP status (batch partial failures). */
  status?: number;
  auth?: Record<string, unknown> | null;
  /**
   * What `wrap_info.wrapped_accessor` names when this reply is wrapped, besides an auth block's
   * accessor (AppRole secret-id generation: the secret id's accessor, Vault PR 12425).
   */
  wrappedAccessor?: string;
  /** Envelope `lease_duration` in seconds (KV v1 reads report their `ttl` key here); 0 when absent. */
  leaseDuration?: number;
  /** Set by the wrap stage on a wrapped answer: its wrap_info, for audit (devices HMAC the token). */
  wrapInfo?: Record<string, unknown>;
  /**
   * `data` already serialized as the router would (JSON with Go's escaping of <, >, &, U+2028,
   * U+2029), as text or as its UTF-8 bytes (one buffer, or pieces in order), for large answers a
   * handler keeps serialized (sync association maps); `data` is still given (audit). Must equal the
   * serialization of `data`.
   */
  dataJson?: string | Buffer | readonly Buffer[];
  /** Response headers the engine sets; only those its mount's allowed_response_headers lists reach the client (sys: all). */
  headers?: Record<string, string>;
  /**
   * A streamed answer (sys/monitor): the router opens a 200 text/plain stream and hands it over;
   * the handler writes until it ends the stream or the client goes away.
   */
  stream?: { contentType: string; start(out: ReplyStream): void };
  /** Non-envelope body (e.g. raw metrics); rarely used. */
  raw?: { contentType: string; body: string | Buffer; status?: number };
}

/** The stream of a streamed answer. */
export interface ReplyStream {
  /** Send text now (false: the client is gone). */
  write(text: string): boolean;
  end(): void;
  /** Called once when the client goes away or the stream ends. */
  onClose(fn: () => void): void;
}

/** A handler: typed input -> domain call -> reply. */
export type Handler<E, D> = (req: RequestContext<E, D>) => Promise<Reply | void> | Reply | void;

/** Cross-field rules checked by the router after coercion (declared rules are enforced rules). */
export type Rule = { kind: 'oneOf'; fields: string[] } | { kind: 'requires'; field: string; needs: string };

/** `oneOf('plaintext', 'batch_input')`: at least one of the fields must be present. */
export function oneOf(...fields: string[]): Rule {
  return { kind: 'oneOf', fields };
}

/** CLI hint: routes with one become commander subcommands. */
export interface CliHint {
  /** Command words, e.g. `transit keys create`. */
  command: string;
  /** Path parameters taken as positional arguments, in order. */
  args?: string[];
  /** Which operation the command performs (defaults to the only/first operation). */
  operation?: Operation;
  /** Field read from stdin when not given (raw bytes, base64-encoded by the CLI when the field is base64). */
  stdin?: string;
  /** Default field printed for `--field`-less raw output. */
  output?: string;
  /** Ask for confirmation on a TTY (destructive). */
  confirm?: boolean;
  /** Example invocations for --help and man pages. */
  examples?: string[];
}

/** The declaration of one endpoint, relative to its mount. */
export interface RouteDef<E, F extends Fields> {
  /** Template: `keys/:name`, `random(/:source)(/:bytes)`, `data/*path`. */
  path: string;
  summary: string;
  description?: string;
  fields: F;
  operations: Partial<Record<Operation, Handler<E, Infer<F>>>>;
  /** Existence check: when false an update becomes a create for the ACL (Vault's upsert rule). */
  exists?: (req: RequestContext<E, Infer<F>>) => Promise<boolean> | boolean;
  rules?: Rule[];
  /** No token needed (sys/health, sys/seal-status, sys/init, sys/unseal). */
  unauthenticated?: boolean;
  /**
   * No token needed for this request when the predicate says so (decided per request from the
   * mount's state and the path parameters, e.g. a key's `public_jwks`); otherwise the route is
   * authenticated as usual. Unauthenticated callers get the same 403 whether the predicate is
   * false or the thing it looks at does not exist.
   */
  unauthenticatedWhen?: (req: { engine: E; params: Record<string, string> }) => Promise<boolean> | boolean;
  /** Answers while sealed (otherwise 503). */
  allowSealed?: boolean;
  /** Needs a root token or `sudo` capability. */
  sudo?: boolean;
  /**
   * Cluster: how a standby treats the route. By default reads and lists are served and anything else
   * goes to the active node; `serve` also serves updates that compute without writing (transit
   * encrypt, sign ...: a write they turn out to need, like an upsert, still goes to the active);
   * `local` is answered by every node itself (health, seal status, unseal); `active` always goes to
   * the active node, reads too (state only the active holds: snapshots, root generation).
   */
  standby?: 'serve' | 'local' | 'active';
  /** Fields carried in the URL query only (documentation). */
  cli?: CliHint;
  /** The route takes arbitrary data keys (cubbyhole, sys/wrapping/wrap): no unknown-parameter warning. */
  anyFields?: boolean;
  /** Accept a raw body instead of JSON (not used by Vault routes). */
  rawBody?: boolean;
}

/** A route with its compiled matcher. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any, Fields> & { readonly matcher: RegExp; readonly params: string[] };

/** Returns a `defineRoute` bound to the engine type `E` (TypeScript cannot partially infer generics). */
export function routesFor<E>() {
  return function defineRoute<F extends Fields>(def: RouteDef<E, F>): AnyRoute {
    const { matcher, params } = compilePath(def.path);
    return Object.assign(def, { matcher, params }) as unknown as AnyRoute;
  };
}

/** Compile a path template to an anchored regex; `:x` is one segment, `*x` the rest, `( )` optional. */
export function compilePath(template: string): { matcher: RegExp; params: string[] } {
  const params: string[] = [];
  let re = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    if (c === '(') re += '(?:';
    else if (c === ')') re += ')?';
    else if (c === ':' || c === '*') {
      let j = i + 1;
      while (j < template.length && /\w/.test(template[j]!)) j++;
      const name = template.slice(i + 1, j);
      params.push(name);
      // Plain (positional) groups, in `params` order: cheaper to match than named groups.
      re += c === ':' ? '([^/]+)' : '(.+)';
      i = j - 1;
    } else re += c.replace(/[.+?^${}|[\]\\]/g, '\\$&');
  }
  return { matcher: new RegExp(`^${re}$`), params };
}

/** The literal first path segment of a template, or null when it can vary (`:x`, `*x`, `(...)`). */
function firstLiteral(template: string): string | null {
  const m = /^[^/(:*]*/.exec(template)![0];
  const next = template[m.length];
  if (m === '' || (next !== undefined && next !== '/' && !(next === '(' && template[m.length + 1] === '/')))
    return null;
  return m;
}

/** Per route table: routes by literal first segment (each list keeps table order, with the variable routes merged in). */
interface RouteIndex {
  byFirst: Map<string, AnyRoute[]>;
  variable: AnyRoute[];
}

const indexes = new WeakMap<readonly AnyRoute[], RouteIndex>();

function indexOf(routes: readonly AnyRoute[]): RouteIndex {
  let ix = indexes.get(routes);
  if (ix) return ix;
  const firsts = routes.map((r) => firstLiteral(r.path));
  const byFirst = new Map<string, AnyRoute[]>();
  for (const key of new Set(firsts.filter((f): f is string => f !== null))) {
    byFirst.set(
      key,
      routes.filter((_r, i) => firsts[i] === key || firsts[i] === null),
    );
  }
  ix = { byFirst, variable: routes.filter((_r, i) => firsts[i] === null) };
  indexes.set(routes, ix);
  return ix;
}

/** Find the first route (in table order) matching `path`; returns it with its path parameters. */
export function matchRoute(
  routes: readonly AnyRoute[],
  path: string,
): { route: AnyRoute; params: Record<string, string> } | null {
  // Only routes whose first segment can match are tried (an index built once per table).
  const ix = indexOf(routes);
  const slash = path.indexOf('/');
  const candidates = ix.byFirst.get(slash === -1 ? path : path.slice(0, slash)) ?? ix.variable;
  for (const route of candidates) {
    const m = route.matcher.exec(path);
    if (m) {
      const params: Record<string, string> = {};
      // The router decoded the URL path once (as Go's net/http does); decoding again would turn a
      // literal "%" in a name into an error or a different name.
      const names = route.params;
      for (let i = 0; i < names.length; i++) {
        const v = m[i + 1];
        if (v !== undefined) params[names[i]!] = v;
      }
      return { route, params };
    }
  }
  return null;
}
