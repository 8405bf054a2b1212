/**
 * The requests a node is serving now (Vault's sys/in-flight-req): the router adds each request's
 * flow when it starts and removes it when it ends; the view is built only when asked.
 */
import { randomUUID } from 'node:crypto';

/** What a tracked request shows. */
export interface InFlightFlow {
  readonly requestId: string;
  readonly req: { url?: string; method?: string; socket: { remoteAddress?: string } };
  /** Epoch ms when the request arrived. */
  readonly started: number;
}

/** The set of requests in progress. */
export class InFlightRequests {
  private readonly flows = new Set<InFlightFlow>();

  add(f: InFlightFlow): void {
    this.flows.add(f);
  }

  delete(f: InFlightFlow): void {
    this.flows.delete(f);
  }

  get size(): number {
    return this.flows.size;
  }

  /** Vault's answer: request id -> start time, client address, path and method. */
  view(): Record<string, Record<string, string>> {
    const out: Record<string, Record<string, string>> = {};
    for (const f of this.flows) {
      const url = f.req.url ?? '/';
      const q = url.indexOf('?');
      out[f.requestId || randomUUID()] = {
        start_time: new Date(f.started).toISOString(),
        client_remote_address: f.req.socket.remoteAddress ?? 'unix',
        request_path: q === -1 ? url : url.slice(0, q),
        request_method: f.req.method ?? '',
        client_id: '',
      };
    }
    return out;
  }
}
