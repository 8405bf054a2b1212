import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startListeners, type Listeners } from '../../../src/server/http.js';
import { httpReq } from '../../support/daemon.js';

// Small limits so the test runs in seconds; the daemon uses the same code with DEFAULT_LIMITS.
const LIMITS = {
  headersTimeoutMs: 400,
  requestTimeoutMs: 800,
  keepAliveTimeoutMs: 1000,
  maxConnections: 8,
  checkIntervalMs: 100,
};

let dir: string;
let listeners: Listeners;
let socket: string;
let tcp: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'keyhold-slow-'));
  socket = join(dir, 's.sock');
  listeners = await startListeners(
    [
      { type: 'unix', path: socket },
      { type: 'tcp', address: '127.0.0.1:0' },
    ],
    (req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('Content-Type', 'application/json');
        res.end('{"ok":true}');
      });
    },
    LIMITS,
  );
  tcp = listeners.addresses.find((a) => a.startsWith('http://'))!;
});

afterAll(async () => {
  await listeners.close(100);
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with what the server sent and how the connection ended, or 'open' if still open at the deadline. */
function watch(s: Socket, deadlineMs: number): Promise<{ ended: boolean; data: string }> {
  return new Promise((resolve) => {
    let data = '';
    s.on('data', (c) => (data += c.toString()));
    const t = setTimeout(() => resolve({ ended: false, data }), deadlineMs);
    s.on('close', () => {
      clearTimeout(t);
      resolve({ ended: true, data });
    });
    s.on('error', () => {});
  });
}

function open(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

describe('slow clients (slowloris) cannot hold the daemon', () => {
  it('creates the Unix socket with mode 0600', () => {
    expect(statSync(socket).mode & 0o777).toBe(0o600);
  });

  it('cuts off a client that trickles its headers and never finishes, while others are served', async () => {
    const slow = await open();
    let i = 0;
    const head = 'GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n';
    const drip = setInterval(() => {
      if (!slow.destroyed) slow.write(i < head.length ? head[i++]! : 'X-Pad: 1\r\n');
    }, 50);
    const outcome = watch(slow, 8000);
    // Served while the slow client is connected.
    const ok = await httpReq({ socket }, 'GET', 'sys/health');
    expect(ok.status).toBe(200);
    const r = await outcome;
    clearInterval(drip);
    expect(r.ended).toBe(true);
    expect(r.data === '' || r.data.startsWith('HTTP/1.1 408')).toBe(true);
  });

  it('cuts off a client that sends headers then trickles a body past the request timeout', async () => {
    const slow = await open();
    slow.write(
      'POST /v1/transit/encrypt/k HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{',
    );
    const drip = setInterval(() => !slow.destroyed && slow.write(' '), 50);
    const r = await watch(slow, 8000);
    clearInterval(drip);
    expect(r.ended).toBe(true);
    const ok = await httpReq({ base: tcp }, 'GET', 'sys/health');
    expect(ok.status).toBe(200);
  });

  it('caps connections: past maxConnections new ones are dropped, and idle ones are reaped so service resumes', async () => {
    const idle: Socket[] = [];
    for (let i = 0; i < LIMITS.maxConnections; i++) idle.push(await open());
    const ends = idle.map((s) => watch(s, 8000));
    // One more: the server closes it at once.
    const extra = await open().catch(() => null);
    if (extra) {
      extra.write('GET /v1/sys/health HTTP/1.1\r\nHost: x\r\n\r\n');
      const r = await watch(extra, 3000);
      expect(r.ended).toBe(true);
      expect(r.data).toBe('');
    }
    // The idle connections are cut by the headers timeout...
    const results = await Promise.all(ends);
    expect(results.every((r) => r.ended)).toBe(true);
    // ...and the daemon serves again.
    const ok = await httpReq({ socket }, 'GET', 'sys/health');
    expect(ok.status).toBe(200);
  });
});
