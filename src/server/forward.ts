/**
 * Request forwarding from a cluster standby to the active node (issue 13 part 4, cluster-wire.md §2.3).
 *
 * The standby replays the caller's request (method, path, query, headers with the token, body bytes)
 * to the active's `api_addr` as read from the barrier-protected leader advertisement, never to an
 * address a client or the database could choose, and copies the active's status, headers and body
 * back: the client sees the active's answer and follows no redirect. A marker header stops loops,
 * and the forwarding signature (forward-signature.ts) tells the active that a member of this cluster
 * sent the request: it applied the rate-limit quotas already (counted once, for its real client, on
 * the node it reached), and the client certificate chain it carries is the client's.
 */
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { KeyholdError, invalid } from '../framework/errors.js';
import type { Cluster } from './cluster.js';
import type { TlsPeer } from '../framework/context.js';
import { FORWARDED_CERT_HEADER, chainValue, peerChain } from './forwarded-cert.js';
import {
  FORWARDED_BY_HEADER,
  FORWARDED_FOR_HEADER,
  FORWARD_SIG_HEADER,
  refuseForwarding,
  type AcceptedForward,
} from './forward-signature.js';
import type { ResponseSink } from './respond.js';

/** Marks a forwarded request (loop guard): the value is the forwarding node's id. */
export const FORWARDED_HEADER = FORWARDED_BY_HEADER;

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'te',
  'trailer',
  'proxy-authorization',
  'proxy-connection',
  'expect',
  // Set by this node only (forward-signature.ts): a client's own copies never travel on.
  FORWARD_SIG_HEADER,
  FORWARDED_CERT_HEADER,
]);

/** What the router's forward stage asks of the cluster. */
export interface ForwardRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  res: ResponseSink;
  /** The client's TLS connection (its certificate travels to the active, signed). */
  tls?: TlsPeer;
  /** The client's address here (travels to the active, signed: bound CIDRs and audit use it there). */
  client: string;
}

/** Where a request is answered. */
export type Placement = 'local' | 'forward';

/** How long a standby waits for an X-Vault-Index it has not applied before forwarding (issue: 2 s). */
const INDEX_WAIT_MS = 2000;

/** The router-facing side of the cluster: the forwarding decision and the forwarding itself. */
export class ClusterRouting {
  constructor(readonly cluster: Cluster) {}

  /** True while this node is a standby. */
  standby(): boolean {
    return this.cluster.role === 'standby';
  }

  /** True while this node is the active node. */
  active(): boolean {
    return this.cluster.role === 'active';
  }

  /**
   * Decide where a request is answered: an active or sealed node answers itself; a standby answers
   * reads, lists and `serve` routes unless told otherwise (disable_standby_reads, X-Vault-Forward),
   * and waits up to 2 s for an X-Vault-Index it has not applied yet (then forwards, or answers 412
   * with `X-Vault-Inconsistent: fail`, as Vault Enterprise).
   */
  async place(
    op: string,
    standbyMode: 'serve' | 'local' | 'active' | undefined,
    headers: IncomingHttpHeaders,
  ): Promise<Placement> {
    if (this.cluster.role !== 'standby' || standbyMode === 'local') return 'local';
    if (headers[FORWARDED_HEADER])
      throw new KeyholdError('unavailable', 'node is not active: a forwarded request is not forwarded again');
    if (standbyMode === 'active') return 'forward';
    const inconsistent = String(headers['x-vault-inconsistent'] ?? '').trim();
    if (inconsistent && inconsistent !== 'fail' && inconsistent !== 'forward-active-node')
      throw invalid('X-Vault-Inconsistent', `must be "forward-active-node" or "fail", got "${inconsistent}"`);
    const fwd = headers['x-vault-forward'];
    if (fwd !== undefined) {
      if (String(fwd).trim() !== 'active-node') throw invalid('X-Vault-Forward', 'must be "active-node"');
      return 'forward';
    }
    if (this.cluster.opts.disableStandbyReads) return 'forward';
    const writes = op !== 'read' && op !== 'list' && standbyMode !== 'serve';
    if (writes) return 'forward';
    const need = this.cluster.requiredIndex(headers['x-vault-index']);
    if (need > 0) {
      const ok = await this.cluster.backend.waitForIndex(
        need,
        inconsistent === 'forward-active-node' ? 0 : INDEX_WAIT_MS,
      );
      if (!ok) {
        if (inconsistent === 'fail') throw new KeyholdError('precondition', 'required index state not present');
        return 'forward';
      }
    }
    return 'local';
  }

  /**
   * Stage forwarded (forward-signature.ts): a request carrying the forwarding signature or a
   * forwarded certificate goes on only when a member of this cluster signed it for this node;
   * resolves to the client certificate it carries (undefined without one) and the client's address,
   * else throws the 400 naming the header. A certificate is taken on the active only.
   */
  async acceptForwarded(
    method: string,
    url: string,
    headers: IncomingHttpHeaders,
    body: Buffer,
  ): Promise<AcceptedForward> {
    if (headers[FORWARDED_CERT_HEADER] !== undefined && this.cluster.role !== 'active')
      throw refuseForwarding(headers, 'this node is not the active node');
    return this.cluster.signature.verify(headers, { method, url, body }, this.cluster.nodeId);
  }

  /** Change sequence of this node's last write (0 before any). */
  writtenIndex(): number {
    return this.cluster.backend.writtenIndex();
  }

  /** The X-Vault-Index to send with a write's answer (null when this node wrote nothing yet). */
  indexHeader(): string | null {
    return this.cluster.indexHeader();
  }

  /** Replay the request to the active and copy its answer; 503 naming the active when it cannot be reached. */
  async forward(r: ForwardRequest): Promise<void> {
    // Just stepped down or started: the active may be known a moment later.
    if (!this.cluster.leader) await this.cluster.refreshLeader().catch(() => {});
    const leader = this.cluster.leader;
    if (!leader || !leader.api_addr)
      throw new KeyholdError('unavailable', 'local node not active but active cluster node not found');
    const base = new URL(leader.api_addr);
    if (r.headers['x-vault-no-request-forwarding']) {
      // Vault: this header asks for a 307 to the active instead of forwarding.
      r.res.writeHead(307, { Location: `${base.origin}${r.url}`, 'Cache-Control': 'no-store' });
      r.res.end();
      return;
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(r.headers)) if (v !== undefined && !HOP_BY_HOP.has(k)) headers[k] = v;
    headers[FORWARDED_HEADER] = this.cluster.nodeId;
    delete headers[FORWARDED_FOR_HEADER]; // only a signed one travels (a client's own never does)
    headers['content-length'] = String(r.body.length);
    const method = r.method === 'LOCK' ? 'LIST' : r.method; // list-verb.ts rewrites LIST for node:http
    // Signed, so the active knows a member sent it: it applied the quotas here (quota-stage.ts, not
    // counted again there), and the client's certificate (cert auth logs in with it) is the client's.
    Object.assign(
      headers,
      await this.cluster.signature.sign({
        method,
        url: r.url,
        body: r.body,
        from: this.cluster.nodeId,
        to: leader.node_id,
        chain: chainValue(peerChain(r.tls)),
        client: r.client,
      }),
    );
    const send = base.protocol === 'https:' ? httpsRequest : httpRequest;
    await new Promise<void>((resolve, reject) => {
      const req = send(
        {
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          path: r.url,
          method,
          headers,
          timeout: 60_000,
        },
        (resp) => {
          const chunks: Buffer[] = [];
          resp.on('data', (c: Buffer) => chunks.push(c));
          resp.on('error', reject);
          resp.on('end', () => {
            const body = Buffer.concat(chunks);
            const out: Record<string, string> = {};
            for (const [k, v] of Object.entries(resp.headers))
              if (v !== undefined && !HOP_BY_HOP.has(k)) out[k] = Array.isArray(v) ? v.join(', ') : v;
            out['content-length'] = String(body.length);
            r.res.writeHead(resp.statusCode ?? 502, out);
            r.res.end(body);
            resolve();
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', (e) =>
        reject(
          new KeyholdError(
            'unavailable',
            `cannot forward the request to the active node at ${leader.api_addr}: ${e.message}`,
          ),
        ),
      );
      req.end(r.body);
    });
  }
}

/** A response sink that adds headers computed when the answer is written (X-Vault-Index after the write). */
export function withLateHeaders(res: ResponseSink, extra: () => Record<string, string> | null): ResponseSink {
  return {
    get headersSent() {
      return res.headersSent;
    },
    writeHead(status: number, headers?: Record<string, string | number>) {
      const more = extra();
      return res.writeHead(status, more ? { ...headers, ...more } : headers);
    },
    end: (body?: string | Buffer | readonly Buffer[]) => res.end(body),
    destroy: () => res.destroy(),
    get takesParts() {
      return res.takesParts;
    },
  };
}
