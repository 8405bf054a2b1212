/**
 * The `socket` audit device (Vault's builtin/audit/socket): each entry is one JSON line sent to
 * `address` over TCP (default), UDP or a Unix stream socket. A write that does not complete within
 * `write_timeout` (default 2s) fails, so a listener that stops reading never stalls requests longer
 * than that; a failed write drops the connection and the next entry reconnects (Vault reconnects and
 * retries once, as here), so a listener that comes back receives entries again.
 */
import { createConnection, type Socket } from 'node:net';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { invalid } from '../framework/errors.js';
import { parseDuration } from '../framework/fields.js';
import type { AuditSink } from './file-device.js';

/** Where the lines go. */
export interface SocketTarget {
  type: 'tcp' | 'udp' | 'unix';
  /** host:port (tcp, udp) or a socket path (unix). */
  address: string;
  timeoutMs: number;
}

/** Parse and check the device's options (400 naming the option). */
export function socketTargetOf(options: Record<string, string>): SocketTarget {
  const type = (options.socket_type ?? 'tcp') || 'tcp';
  if (type !== 'tcp' && type !== 'udp' && type !== 'unix')
    throw invalid('options.socket_type', `must be tcp, udp or unix, got "${type}"`);
  const address = options.address ?? '';
  if (address === '') throw invalid('options.address', 'is required');
  if (type === 'unix') {
    if (!address.startsWith('/') || address.includes('\0'))
      throw invalid('options.address', 'must be an absolute socket path for socket_type unix');
  } else hostPort('options.address', address);
  const timeout =
    options.write_timeout === undefined || options.write_timeout === ''
      ? 2
      : parseDuration('options.write_timeout', options.write_timeout);
  if (timeout <= 0) throw invalid('options.write_timeout', 'must be positive');
  return { type, address, timeoutMs: timeout * 1000 };
}

/** "host:port" / "[::1]:port" split; 400 naming the option when malformed. */
export function hostPort(option: string, address: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < 1 || port > 65535) throw invalid(option, `must be host:port, got "${address.slice(0, 100)}"`);
  return { host: (m[1] ?? m[2])!, port };
}

/** Sends each line to a socket; one connection kept open and re-made after a failure. */
export class SocketSink implements AuditSink {
  private conn: Socket | null = null;
  private connecting: Promise<Socket> | null = null;
  private udp: UdpSocket | null = null;
  private closed = false;

  constructor(private readonly target: SocketTarget) {}

  /** Connect now (enable checks the listener is there); UDP has nothing to check. */
  async open(): Promise<void> {
    this.closed = false;
    if (this.target.type !== 'udp') await this.connection();
  }

  async write(line: string): Promise<void> {
    const buf = Buffer.from(line, 'utf8');
    try {
      await this.send(buf);
    } catch (e) {
      this.drop();
      // A timeout has used the device's time: fail now. Otherwise once more on a fresh connection
      // (a listener restarted since the last entry leaves a dead one behind).
      if ((e as NodeJS.ErrnoException)?.code === 'ETIMEDOUT') throw e;
      await this.send(buf);
    }
  }

  async reopen(): Promise<void> {
    this.drop();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.drop();
    this.udp?.close();
    this.udp = null;
  }

  private send(buf: Buffer): Promise<void> {
    return withTimeout(this.target.timeoutMs, `audit socket ${this.target.address}: write timed out`, async () => {
      if (this.target.type === 'udp') return this.sendUdp(buf);
      const sock = await this.connection();
      await new Promise<void>((resolve, reject) => {
        sock.write(buf, (e) => (e ? reject(e) : resolve()));
      });
    });
  }

  private sendUdp(buf: Buffer): Promise<void> {
    const { host, port } = hostPort('options.address', this.target.address);
    this.udp ??= createSocket(host.includes(':') ? 'udp6' : 'udp4').unref();
    const udp = this.udp;
    return new Promise((resolve, reject) => udp.send(buf, port, host, (e) => (e ? reject(e) : resolve())));
  }

  private connection(): Promise<Socket> {
    if (this.closed) return Promise.reject(new Error('audit socket device is closed'));
    if (this.conn && !this.conn.destroyed) return Promise.resolve(this.conn);
    this.connecting ??= withTimeout(
      this.target.timeoutMs,
      `audit socket ${this.target.address}: connect timed out`,
      () =>
        new Promise<Socket>((resolve, reject) => {
          const sock =
            this.target.type === 'unix'
              ? createConnection(this.target.address)
              : createConnection(hostPort('options.address', this.target.address));
          sock.once('connect', () => {
            sock.removeListener('error', reject);
            // A later failure only drops the connection; the next write reconnects.
            sock.on('error', () => sock.destroy());
            sock.on('close', () => {
              if (this.conn === sock) this.conn = null;
            });
            // Lines go one way; anything the listener sends back is read and ignored.
            sock.on('data', () => {});
            sock.unref();
            this.conn = sock;
            resolve(sock);
          });
          sock.once('error', (e) => {
            sock.destroy();
            reject(e);
          });
        }),
    ).finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private drop(): void {
    this.conn?.destroy();
    this.conn = null;
  }
}

/** Run `fn`, failing after `ms` (the work is abandoned: its late outcome is ignored). */
function withTimeout<T>(ms: number, message: string, fn: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(Object.assign(new Error(message), { code: 'ETIMEDOUT' })), ms);
    fn().then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
