/**
 * Issue 28 part 4 against the real daemon: CORS (preflight answered, an unlisted origin refused
 * before its token is looked at, no credentials header), sys/loggers changing levels at runtime,
 * sys/monitor and `keyhold monitor` streaming lines, sys/host-info, sys/in-flight-req and
 * sys/version-history.
 */
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, cleanup, httpReq, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;

async function must(method: string, path: string, body?: unknown, status = 204) {
  const r = await d.req(method, path, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

beforeAll(async () => {
  d = await startDaemon({ tcp: true });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

describe('sys/config/cors', () => {
  it('is off by default; enabled, answers preflights and names the listed origin; refuses others with 403', async () => {
    expect((await must('GET', 'sys/config/cors', undefined, 200)).body.data).toMatchObject({
      enabled: false,
      allowed_origins: [],
    });
    const bad = await d.req('POST', 'sys/config/cors', { enabled: true });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^allowed_origins: /);
    await must('POST', 'sys/config/cors', {
      allowed_origins: ['https://app.example.com'],
      allowed_headers: ['X-Custom'],
    });
    const c = (await must('GET', 'sys/config/cors', undefined, 200)).body.data;
    expect(c.enabled).toBe(true);
    expect(c.allowed_headers).toEqual(expect.arrayContaining(['X-Vault-Token', 'X-Custom']));

    const pre = await httpReq({ base: d.tcp }, 'OPTIONS', 'transit/encrypt/k', undefined, {
      token: null,
      headers: { Origin: 'https://app.example.com', 'Access-Control-Request-Method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(String(pre.headers['access-control-allow-headers'])).toContain('X-Vault-Token');
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');

    const ok = await httpReq({ base: d.tcp }, 'GET', 'sys/mounts', undefined, {
      token: d.token,
      headers: { Origin: 'https://app.example.com' },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe('https://app.example.com');
    expect(ok.headers['access-control-allow-credentials']).toBeUndefined();

    // Another origin gets nothing but a refusal, even with a valid token.
    const evil = await httpReq({ base: d.tcp }, 'GET', 'sys/mounts', undefined, {
      token: d.token,
      headers: { Origin: 'https://evil.example.net' },
    });
    expect(evil.status).toBe(403);
    expect(evil.body).toEqual({ errors: ['origin not allowed'] });
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();
    const evilPre = await httpReq({ base: d.tcp }, 'OPTIONS', 'sys/mounts', undefined, {
      token: null,
      headers: { Origin: 'https://evil.example.net' },
    });
    expect(evilPre.status).toBe(403);

    // Requests without an Origin (CLIs, SDKs) are unaffected.
    expect((await httpReq({ base: d.tcp }, 'GET', 'sys/mounts', undefined, { token: d.token })).status).toBe(200);
    await must('DELETE', 'sys/config/cors');
    const after = await httpReq({ base: d.tcp }, 'GET', 'sys/mounts', undefined, {
      token: d.token,
      headers: { Origin: 'https://evil.example.net' },
    });
    expect(after.status).toBe(200);
    expect(after.headers['access-control-allow-origin']).toBeUndefined();
  });
});

/** Open sys/monitor and collect its text until `stop()`. */
function monitor(query: string): { text: () => string; status: Promise<number>; stop: () => void } {
  let text = '';
  let stop = () => {};
  const status = new Promise<number>((resolve, reject) => {
    const req = request(
      { socketPath: d.socket, path: `/v1/sys/monitor?${query}`, headers: { 'X-Vault-Token': d.token } },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('error', () => {});
      },
    );
    req.on('error', reject);
    req.end();
    stop = () => req.destroy();
  });
  return { text: () => text, status, stop };
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('sys/loggers and sys/monitor', () => {
  it('lists loggers at the configured level, changes them at runtime and resets them', async () => {
    const l = (await must('GET', 'sys/loggers', undefined, 200)).body.data;
    expect(l.core).toBe('warn');
    await must('POST', 'sys/loggers/core', { level: 'debug' });
    expect((await must('GET', 'sys/loggers/core', undefined, 200)).body.data).toEqual({ core: 'debug' });
    await must('POST', 'sys/loggers', { level: 'error' });
    expect((await must('GET', 'sys/loggers', undefined, 200)).body.data.core).toBe('error');
    await must('DELETE', 'sys/loggers');
    expect((await must('GET', 'sys/loggers', undefined, 200)).body.data.core).toBe('warn');
    const bad = await d.req('POST', 'sys/loggers/core', { level: 'loud' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^level: /);
    const none = await d.req('POST', 'sys/loggers/nosuch', { level: 'info' });
    expect(none.status).toBe(400);
    expect(none.body.errors[0]).toMatch(/^name: /);
  });

  it('a level set at runtime takes effect at once, and a monitor sees lines whatever the loggers level', async () => {
    // A socket audit device whose listener is gone logs an error line per request; a file device
    // beside it keeps requests succeeding (one device is enough).
    const { createServer } = await import('node:net');
    const conns = new Set<import('node:net').Socket>();
    const server = createServer((s) => {
      conns.add(s);
      s.on('data', () => {});
      s.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    await must('PUT', 'sys/audit/monsock', { type: 'socket', options: { address: `127.0.0.1:${port}` } });
    await must('PUT', 'sys/audit/monfile', { type: 'file', options: { file_path: `${d.dir}/mon-audit.log` } });
    server.close();
    for (const c of conns) c.destroy();
    await new Promise((r) => setTimeout(r, 50));
    const failures = () => (d.output().match(/audit device failed to write/g) ?? []).length;

    const json = monitor('log_level=info&log_format=json');
    const std = monitor('log_level=error');
    expect(await json.status).toBe(200);
    expect(await std.status).toBe(200);

    await must('POST', 'sys/loggers/core', { level: 'off' });
    const before = failures();
    await must('GET', 'sys/mounts', undefined, 200);
    // The daemon's own output stays quiet at "off" ...
    await new Promise((r) => setTimeout(r, 100));
    expect(failures()).toBe(before);
    // ... while both monitors received the line, each in its format.
    await until('the json monitor line', () => json.text().includes('audit device failed to write'));
    await until('the standard monitor line', () => std.text().includes('[ERROR] core: audit device failed to write'));
    const line = json
      .text()
      .split('\n')
      .find((l) => l.includes('audit device failed to write'))!;
    expect(JSON.parse(line)).toMatchObject({
      level: 'error',
      logger: 'core',
      msg: 'audit device failed to write',
      path: 'monsock/',
    });

    // Back to the configured level: the line reaches the daemon's output again.
    await must('DELETE', 'sys/loggers/core');
    await must('GET', 'sys/mounts', undefined, 200);
    await until('the daemon output line', () => failures() > before);
    json.stop();
    std.stop();
    await must('DELETE', 'sys/audit/monsock');
    await must('DELETE', 'sys/audit/monfile');
  });

  it('refuses a bad monitor format or level naming the field', async () => {
    const bad = await d.req('GET', 'sys/monitor?log_format=xml');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^log_format: /);
    const lvl = await d.req('GET', 'sys/monitor?log_level=trace');
    expect(lvl.status).toBe(400);
    expect(lvl.body.errors[0]).toMatch(/^log_level: /);
  });

  it('keyhold monitor prints the lines it receives until interrupted', async () => {
    const p = spawn(process.execPath, [BIN, 'monitor', '--log-level', 'info', '--log-format', 'json'], {
      env: { ...process.env, KEYHOLD_ADDR: d.addr, KEYHOLD_TOKEN: d.token, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    p.stdout.on('data', (c: Buffer) => (out += c.toString()));
    p.stderr.on('data', (c: Buffer) => (err += c.toString()));
    await until('the monitor to start', () => err.includes('Streaming logs'));
    // A socket audit device with nobody listening beside a file device: each request logs an error line.
    const { createServer } = await import('node:net');
    const conns = new Set<import('node:net').Socket>();
    const server = createServer((s) => {
      conns.add(s);
      s.on('data', () => {});
      s.on('error', () => {});
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    await must('PUT', 'sys/audit/clisock', { type: 'socket', options: { address: `127.0.0.1:${port}` } });
    await must('PUT', 'sys/audit/clifile', { type: 'file', options: { file_path: `${d.dir}/cli-mon-audit.log` } });
    server.close();
    for (const c of conns) c.destroy();
    for (let i = 0; i < 50 && !out.includes('audit device failed to write'); i++) {
      await must('GET', 'sys/mounts', undefined, 200);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(out).toContain('"msg":"audit device failed to write"');
    expect(p.exitCode).toBeNull();
    p.kill('SIGINT');
    await new Promise((r) => p.once('exit', r));
    await must('DELETE', 'sys/audit/clisock');
    await must('DELETE', 'sys/audit/clifile');
  });
});

describe('sys/host-info, sys/in-flight-req, sys/version-history', () => {
  it('host-info has CPU, memory, disk and host as Vault names them', async () => {
    const h = (await must('GET', 'sys/host-info', undefined, 200)).body.data;
    expect(h.cpu.length).toBeGreaterThan(0);
    expect(h.cpu_times.length).toBe(h.cpu.length);
    expect(h.memory.total).toBeGreaterThan(0);
    expect(h.host.hostname).toBeTruthy();
    expect(h.host.kernelVersion).toBeTruthy();
    expect(Date.parse(h.timestamp)).toBeGreaterThan(0);
  });

  it('in-flight-req lists the requests in progress (a monitor stream among them), without an envelope', async () => {
    const m = monitor('log_level=info');
    expect(await m.status).toBe(200);
    const r = await must('GET', 'sys/in-flight-req', undefined, 200);
    const entries = Object.values(r.body) as Array<Record<string, string>>;
    expect(entries.some((e) => e.request_path === '/v1/sys/monitor' && e.request_method === 'GET')).toBe(true);
    expect(entries.some((e) => e.request_path === '/v1/sys/in-flight-req')).toBe(true);
    m.stop();
  });

  it('version-history lists the running version', async () => {
    const v = (await must('LIST', 'sys/version-history', undefined, 200)).body.data;
    expect(v.keys.length).toBe(1);
    expect(v.key_info[v.keys[0]]).toMatchObject({ previous_version: '' });
    expect(Date.parse(v.key_info[v.keys[0]].timestamp_installed)).toBeGreaterThan(0);
  });
});
