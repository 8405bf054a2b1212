/** CIDR lists of auth roles (secret_id_bound_cidrs, token_bound_cidrs), checked with node:net's BlockList. */
import { BlockList, isIP } from 'node:net';

/** True when `s` is an IP address or an IPv4/IPv6 CIDR block. */
export function isCidr(s: string): boolean {
  const [ip, bits, extra] = s.split('/');
  if (extra !== undefined || !ip) return false;
  const v = isIP(ip);
  if (!v) return false;
  if (bits === undefined) return true;
  if (!/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (v === 4 ? 32 : 128);
}

/** Strip an IPv4-mapped IPv6 prefix (`::ffff:127.0.0.1`) as Go's net.ParseIP sees the address. */
export function plainIp(addr: string): string {
  return addr.startsWith('::ffff:') && isIP(addr.slice(7)) === 4 ? addr.slice(7) : addr;
}

/** True when `addr` lies in one of `cidrs` (an empty list allows every address). Unix-socket callers count as 127.0.0.1. */
export function addressAllowed(addr: string, cidrs: readonly string[]): boolean {
  if (cidrs.length === 0) return true;
  const ip = plainIp(addr === 'unix' || addr === '' ? '127.0.0.1' : addr);
  const v = isIP(ip);
  if (!v) return false;
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, bits] = c.split('/');
    const nv = isIP(net!);
    if (!nv) continue;
    const type = nv === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(net!, type);
    else list.addSubnet(net!, Number(bits), type);
  }
  return list.check(ip, v === 4 ? 'ipv4' : 'ipv6');
}

/** True when every block of `inner` lies inside some block of `outer` (secret-id cidr_list within the role's). */
export function cidrsWithin(inner: readonly string[], outer: readonly string[]): boolean {
  if (outer.length === 0) return true;
  return inner.every((c) => {
    const [net, bits] = c.split('/');
    const v = isIP(net!);
    const b = bits === undefined ? (v === 4 ? 32 : 128) : Number(bits);
    return outer.some((o) => {
      const ob = o.includes('/') ? Number(o.split('/')[1]) : v === 4 ? 32 : 128;
      return ob <= b && addressAllowed(net!, [o]);
    });
  });
}
