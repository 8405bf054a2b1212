/** One request on its way through the router's pipeline, and the mount and audit shapes it carries. */
import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { MountInfo, RequestContext, TlsPeer, TokenInfo } from '../framework/context.js';
import type { AnyRoute, Operation, Reply } from '../framework/route.js';
import type { FastRequest } from './fast-http.js';
import type { ResponseSink } from './respond.js';

/** A request from node:http or from the fast lane (which has read the body already). */
export type AnyRequest = IncomingMessage | FastRequest;
/** One resolved mount: its table entry, static routes and live engine instance. */
export interface MountedEngine {
  mount: MountInfo;
  routes: readonly AnyRoute[];
  instance: unknown;
}
/** An audit sink the router calls around every request (issue 8 adds file devices). */
export interface AuditHook {
  /** Called before the handler; throwing fails the request closed. */
  request(entry: AuditEntry): Promise<void>;
  /** `body` is `{ errors }` for a failure, else `{ data, auth }` of the reply (null for an empty reply). */
  response(entry: AuditEntry, status: number, body: unknown): Promise<void>;
  enabled(): boolean;
}

/** What is known about a request for audit. */
export interface AuditEntry {
  requestId: string;
  operation: Operation;
  path: string;
  remoteAddress: string;
  token: TokenInfo | null;
  data: Record<string, unknown>;
  /** Names of sensitive fields per the route declaration. */
  sensitive: Set<string>;
  /** The request's headers (the audit broker logs those configured in sys/config/auditing/request-headers). */
  headers?: Record<string, string | string[] | undefined>;
}

/**
 * One request on its way through the pipeline: what each stage has learned so far. Every field is
 * set in the constructor so all flows share one shape (the hot path stays monomorphic).
 */
export class Flow {
  /** Vault's request id, also the response's `request_id`. */
  readonly requestId = randomUUID();
  /** Request path under `/v1/`, percent-decoded. */
  path = '';
  /** Query parameters (without `list`), or null when the URL has none. */
  query: URLSearchParams | null = null;
  /** The operation the HTTP method asks for (`update` may become `create` after the existence check). */
  op: Operation = 'read';
  /** Parsed JSON or form body. */
  body: Record<string, unknown> = EMPTY;
  mounted: MountedEngine | null = null;
  route: AnyRoute | null = null;
  params: Record<string, string> = EMPTY_PARAMS;
  /** Path under the mount, without trailing slashes. */
  sub = '';
  /** Request data: query, then body, then path parameters. */
  raw: Record<string, unknown> = EMPTY;
  token: TokenInfo | null = null;
  /** Tokens looked up for this request; one on its last use is revoked when the request ends. */
  readonly seen: TokenInfo[] = [];
  /** Coerced fields, or the coercion error (raised only after the ACL has spoken). */
  data: Record<string, unknown> = EMPTY;
  unknownFields: string[] = NO_NAMES;
  fieldError: unknown = null;
  ctx: RequestContext<unknown, Record<string, unknown>> | null = null;
  /** Audit entry when an audit device is enabled, and the hook that logged it (kept: a handler may disable the last device). */
  audit: AuditEntry | undefined = undefined;
  auditor: AuditHook | undefined = undefined;
  reply: Reply | undefined = undefined;
  /** The client certificate a standby forwarded with the request, once verified (forward-signature.ts). */
  forwardedTls: TlsPeer | undefined = undefined;
  /** A member of this cluster forwarded the request, signed (forward-signature.ts): it applied the quotas. */
  forwardedByMember = false;
  /** The client's address on the standby that forwarded the request, once verified (forward-signature.ts). */
  forwardedFor: string | undefined = undefined;
  /** The body as received (a standby forwards it byte for byte). */
  rawBody: Buffer = NO_BODY;
  /** No token needed: the route says so, or its per-request predicate did (stage open access). */
  open = false;
  /** Seconds of response wrapping asked for with X-Vault-Wrap-TTL (0: none). */
  wrapTtl = 0;
  /** Epoch ms when the request arrived (sys/in-flight-req). */
  readonly started = Date.now();
  /** A streamed answer is being sent: the request stays in flight until the stream closes. */
  streaming = false;

  constructor(
    readonly req: AnyRequest,
    public res: ResponseSink,
  ) {}
}

const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const EMPTY_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;
const NO_NAMES: string[] = [];
const NO_BODY = Buffer.alloc(0);

/**
 * The client's address: the connection's, or for a request a member of this cluster forwarded
 * (signed), the address the client had on that standby, as Vault uses for forwarded requests
 * (token_bound_cidrs, the login methods' bound CIDRs, audit `remote_address`). `unix` for a Unix socket.
 */
export function clientAddress(f: {
  forwardedFor: string | undefined;
  req: { socket: { remoteAddress?: string } };
}): string {
  return f.forwardedFor ?? f.req.socket.remoteAddress ?? 'unix';
}
