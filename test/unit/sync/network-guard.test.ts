import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NetworkGuard } from '../../../src/sync/network-guard.js';
import { HttpClient } from '../../../src/sync/http-client.js';
import { SyncFailure } from '../../../src/sync/failure.js';

const strict = {
  disable_strict_networking: false,
  allowed_ipv4_addresses: [],
  allowed_ipv6_addresses: [],
  allowed_ports: [],
};

describe('network guard', () => {
  it('blocks IANA special-purpose ranges and allows public addresses', () => {
    const g = new NetworkGuard(strict);
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::',
    ]) {
      expect(g.addressAllowed(a), a).toBe(false);
    }
    for (const a of ['8.8.8.8', '140.82.112.3', '2606:4700::1111', '::ffff:8.8.8.8'])
      expect(g.addressAllowed(a), a).toBe(true);
  });

  it('lets allowed CIDRs through and everything through with strict networking off', () => {
    const g = new NetworkGuard({
      ...strict,
      allowed_ipv4_addresses: ['127.0.0.1/32', '10.0.0.0/8'],
      allowed_ipv6_addresses: ['::1/128'],
    });
    expect(g.addressAllowed('127.0.0.1')).toBe(true);
    expect(g.addressAllowed('127.0.0.2')).toBe(false);
    expect(g.addressAllowed('10.9.9.9')).toBe(true);
    expect(g.addressAllowed('::1')).toBe(true);
    expect(new NetworkGuard({ ...strict, disable_strict_networking: true }).addressAllowed('127.0.0.1')).toBe(true);
  });

  it('allows only ports 80 and 443 unless listed', () => {
    const g = new NetworkGuard(strict);
    expect(() => g.checkUrl(new URL('https://example.com/'))).not.toThrow();
    expect(() => g.checkUrl(new URL('http://example.com:80/'))).not.toThrow();
    expect(() => g.checkUrl(new URL('https://example.com:8443/'))).toThrow(/port 8443/);
    expect(() =>
      new NetworkGuard({ ...strict, allowed_ports: [8443] }).checkUrl(new URL('https://example.com:8443/')),
    ).not.toThrow();
    expect(() => g.checkUrl(new URL('https://127.0.0.1/'))).toThrow(/blocked range/);
    expect(() => g.checkUrl(new URL('ftp://example.com/'))).toThrow(/scheme/);
  });

  it('refuses malformed CIDRs and ports with 400s naming the field', () => {
    expect(() => new NetworkGuard({ ...strict, allowed_ipv4_addresses: ['300.1.1.1/8'] })).toThrow(
      'allowed_ipv4_addresses: invalid CIDR address "300.1.1.1/8"',
    );
    expect(() => new NetworkGuard({ ...strict, allowed_ipv4_addresses: ['10.0.0.0/33'] })).toThrow(/invalid CIDR/);
    expect(() => new NetworkGuard({ ...strict, allowed_ipv6_addresses: ['127.0.0.1/32'] })).toThrow(
      /allowed_ipv6_addresses: invalid CIDR/,
    );
    expect(() => new NetworkGuard({ ...strict, allowed_ports: [0] })).toThrow('allowed_ports: invalid port 0');
    expect(() => new NetworkGuard({ ...strict, allowed_ports: [70000] })).toThrow(/invalid port/);
  });

  describe('on real connections', () => {
    let server: Server;
    let port = 0;
    let hits = 0;
    beforeAll(async () => {
      server = createServer((_q, r) => {
        hits++;
        r.end('ok');
      });
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it('refuses "localhost" (resolved to loopback) before any byte is sent', async () => {
      const http = new HttpClient(new NetworkGuard({ ...strict, allowed_ports: [port] }), 2000);
      const before = hits;
      const err = await http.send({ method: 'GET', url: `http://localhost:${port}/`, what: 'probe' }).catch((e) => e);
      http.close();
      expect(err).toBeInstanceOf(SyncFailure);
      expect(err.status).toBe('CLIENT_SIDE_ERROR');
      expect(err.message).toMatch(/blocked addresses/);
      expect(hits).toBe(before);
    });

    it('connects when the loopback address and port are allowed', async () => {
      const http = new HttpClient(
        new NetworkGuard({
          ...strict,
          allowed_ipv4_addresses: ['127.0.0.0/8'],
          allowed_ipv6_addresses: ['::1/128'],
          allowed_ports: [port],
        }),
        2000,
      );
      const r = await http.send({ method: 'GET', url: `http://localhost:${port}/`, what: 'probe' });
      http.close();
      expect(r.status).toBe(200);
      expect(r.text).toBe('ok');
    });

    it('reports a timeout as UNKNOWN (the provider may or may not have applied it)', async () => {
      const slow = createServer(() => {});
      await new Promise<void>((r) => slow.listen(0, '127.0.0.1', r));
      const p = (slow.address() as AddressInfo).port;
      const http = new HttpClient(new NetworkGuard({ ...strict, disable_strict_networking: true }), 150);
      const err = await http
        .send({ method: 'PUT', url: `http://127.0.0.1:${p}/`, body: 'x', what: 'put' })
        .catch((e) => e);
      http.close();
      slow.closeAllConnections();
      await new Promise<void>((r) => slow.close(() => r()));
      expect(err).toMatchObject({ status: 'UNKNOWN', retryable: true });
    });
  });
});
