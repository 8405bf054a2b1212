/**
 * The `syslog` audit device (Vault's builtin/audit/syslog): each entry is one syslog message at
 * severity info with the device's `facility` (default AUTH) and `tag` (default "keyhold"), its text
 * the JSON entry. Vault writes to the local syslog's datagram socket; Node has no Unix datagram
 * sockets, so keyhold sends RFC 3164 messages to a syslog daemon's network input: `address`
 * (keyhold's option, default udp://127.0.0.1:514; tcp://host:port frames messages by newline, as
 * rsyslog's imtcp reads them). Transport and timeout are the socket device's.
 */
import { hostname } from 'node:os';
import { invalid } from '../framework/errors.js';
import type { AuditSink } from './file-device.js';
import { SocketSink, hostPort, socketTargetOf } from './socket-device.js';

/** Syslog facility codes (RFC 5424 section 6.2.1), by the names Vault's device accepts. */
const FACILITIES: Record<string, number> = {
  KERN: 0,
  USER: 1,
  MAIL: 2,
  DAEMON: 3,
  AUTH: 4,
  SYSLOG: 5,
  LPR: 6,
  NEWS: 7,
  UUCP: 8,
  CRON: 9,
  AUTHPRIV: 10,
  FTP: 11,
  LOCAL0: 16,
  LOCAL1: 17,
  LOCAL2: 18,
  LOCAL3: 19,
  LOCAL4: 20,
  LOCAL5: 21,
  LOCAL6: 22,
  LOCAL7: 23,
};
const SEVERITY_INFO = 6;

/** The default syslog address (a local daemon's UDP input). */
export const DEFAULT_SYSLOG_ADDRESS = 'udp://127.0.0.1:514';

/** Normalise and check syslog options (400 naming the option). */
export function normalizeSyslogOptions(options: Record<string, string>): Record<string, string> {
  const out = { ...options };
  const facility = (out.facility ?? 'AUTH').toUpperCase() || 'AUTH';
  if (FACILITIES[facility] === undefined)
    throw invalid(
      'options.facility',
      `unknown facility "${out.facility}"; one of ${Object.keys(FACILITIES).join(', ')}`,
    );
  out.facility = facility;
  const tag = out.tag ?? 'keyhold';
  if (!/^[\w.\-/]{1,32}$/.test(tag))
    throw invalid('options.tag', 'must be 1 to 32 letters, digits, ".", "-", "_" or "/"');
  out.tag = tag;
  out.address = out.address || DEFAULT_SYSLOG_ADDRESS;
  transportOf(out.address);
  if (out.write_timeout !== undefined) socketTargetOf({ address: '127.0.0.1:1', write_timeout: out.write_timeout });
  return out;
}

function transportOf(address: string): { type: 'udp' | 'tcp'; address: string } {
  const m = /^(udp|tcp):\/\/(.+)$/.exec(address);
  if (!m)
    throw invalid('options.address', `must be udp://host:port or tcp://host:port, got "${address.slice(0, 100)}"`);
  hostPort('options.address', m[2]!);
  return { type: m[1] as 'udp' | 'tcp', address: m[2]! };
}

/** Sends entries as syslog messages. */
export class SyslogSink implements AuditSink {
  private readonly inner: SocketSink;
  private readonly head: string;

  constructor(options: Record<string, string>) {
    const t = transportOf(options.address ?? DEFAULT_SYSLOG_ADDRESS);
    const { timeoutMs } = socketTargetOf({ address: '127.0.0.1:1', write_timeout: options.write_timeout ?? '' });
    this.inner = new SocketSink({ type: t.type, address: t.address, timeoutMs });
    const pri = FACILITIES[options.facility ?? 'AUTH']! * 8 + SEVERITY_INFO;
    // RFC 3164: <PRI>TIMESTAMP HOSTNAME TAG[PID]: MSG (the timestamp is added per message).
    this.head = `<${pri}>`;
    this.tail = ` ${hostname().split('.')[0] || 'localhost'} ${options.tag ?? 'keyhold'}[${process.pid}]: `;
  }

  private readonly tail: string;

  open(): Promise<void> {
    return this.inner.open();
  }

  write(line: string): Promise<void> {
    const text = line.endsWith('\n') ? line.slice(0, -1) : line;
    return this.inner.write(this.head + stamp(new Date()) + this.tail + text + '\n');
  }

  reopen(): Promise<void> {
    return this.inner.reopen();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** RFC 3164 TIMESTAMP: "Mmm dd hh:mm:ss" in local time, the day space-padded. */
function stamp(d: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${MONTHS[d.getMonth()]} ${String(d.getDate()).padStart(2, ' ')} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}
