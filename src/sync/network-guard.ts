/**
 * The SSRF guard of sync connectors (reference sync-wire.md 1.5.1 and 4.3): by default every IANA
 * special-purpose IPv4/IPv6 range (loopback, link-local, RFC 1918, ...) is refused and only ports 80
 * and 443 are allowed; a destination widens this with `allowed_ipv4_addresses`,
 * `allowed_ipv6_addresses`, `allowed_ports`, or turns it off with `disable_strict_networking`.
 * The check runs on the address actually connected to (a custom `lookup` on the agents), so DNS
 * rebinding cannot slip past a check made earlier.
 */
import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { invalid } from '../framework/errors.js';

/** IANA IPv4 special-purpose address registry, plus multicast and limited broadcast. */
const BLOCKED_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.31.196.0', 24],
  ['192.52.193.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['192.175.48.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];

/** IANA IPv6 special-purpose address registry, plus multicast (IPv4-mapped addresses are checked as IPv4). */
const BLOCKED_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
];

/** Ports allowed without configuration. */
const DEFAULT_PORTS = [80, 443];

/** Error code of a guard refusal (classified as a client-side configuration problem). */
export const GUARD_ERROR_CODE = 'EKEYHOLD_NETWORK_GUARD';

/** A refusal by the guard. */
export class NetworkGuardError extends Error {
  readonly code = GUARD_ERROR_CODE;
}

/** Parse and check a list of CIDRs for one family; throws 400 naming the field. */
export function parseCidrs(field: string, list: string[], family: 'ipv4' | 'ipv6'): Array<[string, number]> {
  return list.map((raw) => {
    const s = raw.trim();
    const slash = s.indexOf('/');
    const addr = slash === -1 ? s : s.slice(0, slash);
    const prefixText = slash === -1 ? (family === 'ipv4' ? '32' : '128') : s.slice(slash + 1);
    const max = family === 'ipv4' ? 32 : 128;
    const ok =
      (family === 'ipv4' ? isIPv4(addr) : isIPv6(addr)) && /^\d{1,3}$/.test(prefixText) && Number(prefixText) <= max;
    if (!ok) throw invalid(field, `invalid CIDR address "${s.slice(0, 64)}"`);
    return [addr, Number(prefixText)];
  });
}

/** Check a list of ports; throws 400 naming the field. */
export function checkPorts(field: string, ports: number[]): number[] {
  for (const p of ports) if (!Number.isInteger(p) || p < 1 || p > 65535) throw invalid(field, `invalid port ${p}`);
  return ports;
}

/** What a destination allows. */
export interface NetworkRules {
  disable_strict_networking: boolean;
  allowed_ipv4_addresses: string[];
  allowed_ipv6_addresses: string[];
  allowed_ports: number[];
}

/** Compiled guard for one destination. */
export class NetworkGuard {
  private readonly blocked = new BlockList();
  private readonly allowed = new BlockList();
  private readonly ports: Set<number>;
  readonly strict: boolean;

  constructor(rules: NetworkRules) {
    this.strict = !rules.disable_strict_networking;
    for (const [a, p] of BLOCKED_V4) this.blocked.addSubnet(a, p, 'ipv4');
    for (const [a, p] of BLOCKED_V6) this.blocked.addSubnet(a, p, 'ipv6');
    for (const [a, p] of parseCidrs('allowed_ipv4_addresses', rules.allowed_ipv4_addresses, 'ipv4'))
      this.allowed.addSubnet(a, p, 'ipv4');
    for (const [a, p] of parseCidrs('allowed_ipv6_addresses', rules.allowed_ipv6_addresses, 'ipv6'))
      this.allowed.addSubnet(a, p, 'ipv6');
    this.ports = new Set([...DEFAULT_PORTS, ...checkPorts('allowed_ports', rules.allowed_ports)]);
  }

  /** Whether connecting to this IP address is permitted. */
  addressAllowed(address: string): boolean {
    if (!this.strict) return true;
    let addr = address;
    let family: 'ipv4' | 'ipv6' = isIPv4(addr) ? 'ipv4' : 'ipv6';
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(addr);
    if (mapped) {
      addr = mapped[1]!;
      family = 'ipv4';
    }
    if (this.allowed.check(addr, family)) return true;
    return !this.blocked.check(addr, family);
  }

  /** Check a URL's scheme, port and (when literal) address before any connection; throws NetworkGuardError. */
  checkUrl(url: URL): void {
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new NetworkGuardError(`network guard: scheme ${url.protocol} is not allowed`);
    if (!this.strict) return;
    const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
    if (!this.ports.has(port))
      throw new NetworkGuardError(`network guard: port ${port} is not allowed; add it to allowed_ports`);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host) && !this.addressAllowed(host)) {
      throw new NetworkGuardError(
        `network guard: address ${host} is in a blocked range; add it to allowed_ipv${isIPv4(host) ? 4 : 6}_addresses`,
      );
    }
  }

  /** A `lookup` for net.connect that drops blocked addresses (and fails when none is left). */
  readonly lookup = (
    hostname: string,
    options: { all?: boolean; family?: number | string } | number,
    callback: (...args: unknown[]) => void,
  ): void => {
    const opts = typeof options === 'number' ? { family: options } : (options ?? {});
    dnsLookup(
      hostname,
      { all: true, family: typeof opts.family === 'number' ? opts.family : 0 },
      (err, addresses: LookupAddress[]) => {
        if (err) return callback(err);
        const ok = addresses.filter((a) => this.addressAllowed(a.address));
        if (ok.length === 0) {
          return callback(
            new NetworkGuardError(
              `network guard: ${hostname} resolves only to blocked addresses; allow them with allowed_ipv4_addresses/allowed_ipv6_addresses`,
            ),
          );
        }
        if (opts.all) return callback(null, ok);
        return callback(null, ok[0]!.address, ok[0]!.family);
      },
    );
  };

  /** Keep-alive agents that connect only through the guard's lookup. */
  agents(): { http: HttpAgent; https: HttpsAgent } {
    // Agent options are passed on to net.connect/tls.connect, `lookup` included.
    const opts = { keepAlive: true, maxSockets: 16, lookup: this.lookup } as unknown as ConstructorParameters<
      typeof HttpAgent
    >[0];
    return { http: new HttpAgent(opts), https: new HttpsAgent(opts) };
  }
}
