/**
 * Issue 28 part 3 against the real daemon: the socket audit device against a local TCP listener
 * that goes away and comes back (requests fail closed while no device can log them, as Vault's rule
 * says, and pass again once it is back), and the syslog device against a real rsyslogd (Debian's)
 * started here in a temp dir listening on 127.0.0.1.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, freePort, startDaemon, type Daemon } from '../support/daemon.js';

let d: Daemon;

async function must(method: string, path: string, body?: unknown, status = 204) {
  const r = await d.req(method, path, body);
  expect(r.status, `${method} ${path}: ${r.text}`).toBe(status);
  return r;
}

beforeAll(async () => {
  d = await startDaemon();
  await must('POST', 'sys/mounts/kv', { type: 'kv', options: { version: '1' } });
}, 30_000);
afterAll(async () => {
  await d?.stop();
  if (d) cleanup(d.dir);
});

/** A TCP listener collecting the lines it receives. */
function listen(port: number): Promise<{ server: Server; lines: string[]; sockets: Set<Socket> }> {
  const lines: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    let buf = '';
    s.on('data', (c) => {
      buf += c.toString('utf8');
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        lines.push(buf.slice(0, i));
        buf = buf.slice(i + 1);
      }
    });
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ server, lines, sockets }));
  });
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('socket audit device', () => {
  it('sends Vault-format entries over TCP; with the listener gone requests fail closed; when it is back they pass and arrive', async () => {
    const port = freePort();
    let l = await listen(port);
    await must('PUT', 'sys/audit/sock', {
      type: 'socket',
      options: { address: `127.0.0.1:${port}`, socket_type: 'tcp', write_timeout: '1s' },
    });
    await must('POST', 'kv/a', { secret: 'hunter2' });
    await until('request and response entries', () => l.lines.filter((x) => x.includes('"kv/a"')).length >= 2);
    const entries = l.lines.map((x) => JSON.parse(x));
    const req = entries.find((e) => e.type === 'request' && e.request.path === 'kv/a');
    expect(req.request.data.secret).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(req.auth.client_token).toMatch(/^hmac-sha256:/);
    expect(l.lines.join('\n')).not.toContain('hunter2');

    // The listener goes away: the only device cannot log, so the request is refused (503).
    for (const s of l.sockets) s.destroy();
    await new Promise<void>((r) => l.server.close(() => r()));
    const t0 = Date.now();
    const down = await d.req('GET', 'kv/a');
    expect(down.status).toBe(503);
    expect(Date.now() - t0).toBeLessThan(3000);

    // It comes back on the same port: requests pass again and their entries arrive.
    l = await listen(port);
    await must('GET', 'kv/a', undefined, 200);
    await until('entries after the listener came back', () => l.lines.some((x) => x.includes('"kv/a"')));
    // Disabled while it can still log (disabling is a request too, and needs one device to log it).
    await must('DELETE', 'sys/audit/sock');
    for (const s of l.sockets) s.destroy();
    await new Promise<void>((r) => l.server.close(() => r()));
  });

  it('with a file device beside it, a dead socket device does not fail requests (one device is enough)', async () => {
    const port = freePort();
    const l = await listen(port);
    const file = join(d.dir, 'beside.log');
    await must('PUT', 'sys/audit/sock2', { type: 'socket', options: { address: `127.0.0.1:${port}` } });
    await must('PUT', 'sys/audit/file2', { type: 'file', options: { file_path: file } });
    for (const s of l.sockets) s.destroy();
    await new Promise<void>((r) => l.server.close(() => r()));
    await must('GET', 'kv/a', undefined, 200);
    expect(readFileSync(file, 'utf8')).toContain('"kv/a"');
    await must('DELETE', 'sys/audit/sock2');
    await must('DELETE', 'sys/audit/file2');
  });

  it('refuses bad options naming them', async () => {
    for (const [options, name] of [
      [{ address: '127.0.0.1:1', socket_type: 'sctp' }, 'options.socket_type'],
      [{}, 'options.address'],
      [{ address: 'nohostport' }, 'options.address'],
      [{ address: '127.0.0.1:1', write_timeout: 'soon' }, 'options.write_timeout'],
    ] as const) {
      const r = await d.req('PUT', 'sys/audit/badsock', { type: 'socket', options });
      expect(r.status, r.text).toBe(400);
      expect(r.body.errors[0]).toMatch(new RegExp(`^${name.replace('.', '\\.')}: `));
    }
    const fac = await d.req('PUT', 'sys/audit/badsys', { type: 'syslog', options: { facility: 'NOPE' } });
    expect(fac.status).toBe(400);
    expect(fac.body.errors[0]).toMatch(/^options\.facility: /);
  });
});

describe('sys/config/auditing/request-headers', () => {
  it('logs the configured request headers, HMACed where asked, and no others', async () => {
    const file = join(d.dir, 'headers.log');
    await must('PUT', 'sys/audit/hfile', { type: 'file', options: { file_path: file } });
    await must('POST', 'sys/config/auditing/request-headers/X-Forwarded-For', { hmac: false });
    await must('POST', 'sys/config/auditing/request-headers/x-team', { hmac: true });
    expect((await must('GET', 'sys/config/auditing/request-headers', undefined, 200)).body.data).toEqual({
      headers: { 'x-forwarded-for': { hmac: false }, 'x-team': { hmac: true } },
    });
    expect((await must('GET', 'sys/config/auditing/request-headers/x-team', undefined, 200)).body.data).toEqual({
      'x-team': { hmac: true },
    });
    const r = await d.req('GET', 'kv/a', undefined, {
      headers: { 'X-Forwarded-For': '10.1.2.3', 'X-Team': 'payments', 'X-Other': 'nope' },
    });
    expect(r.status).toBe(200);
    const entry = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((e) => e.type === 'request' && e.request.path === 'kv/a');
    expect(entry.request.headers['x-forwarded-for']).toEqual(['10.1.2.3']);
    expect(entry.request.headers['x-team'][0]).toMatch(/^hmac-sha256:/);
    expect(entry.request.headers['x-other']).toBeUndefined();
    await must('DELETE', 'sys/config/auditing/request-headers/x-team');
    expect((await d.req('GET', 'sys/config/auditing/request-headers/x-team')).status).toBe(404);
    const bad = await d.req('POST', 'sys/config/auditing/request-headers/bad%20header', {});
    expect(bad.status).toBe(400);
    await must('DELETE', 'sys/audit/hfile');
  });
});

const RSYSLOGD =
  ['/usr/sbin/rsyslogd', '/sbin/rsyslogd'].find((p) => existsSync(p)) ??
  (spawnSync('sh', ['-c', 'command -v rsyslogd']).stdout?.toString().trim() || undefined);

describe.skipIf(!RSYSLOGD)('syslog audit device with a real rsyslogd', () => {
  let rs: ChildProcess | undefined;
  let out: string;
  let udpPort: number;
  let tcpPort: number;

  beforeAll(async () => {
    const dir = d.dir;
    out = join(dir, 'rsyslog-out.log');
    udpPort = freePort();
    tcpPort = freePort();
    const conf = join(dir, 'rsyslog.conf');
    writeFileSync(
      conf,
      [
        `global(workDirectory="${dir}" maxMessageSize="64k")`,
        'module(load="imudp")',
        `input(type="imudp" address="127.0.0.1" port="${udpPort}")`,
        'module(load="imtcp")',
        `input(type="imtcp" address="127.0.0.1" port="${tcpPort}")`,
        'template(name="kh" type="string" string="%syslogfacility-text% %syslogseverity-text% %programname% %msg%\\n")',
        `*.* action(type="omfile" file="${out}" template="kh")`,
        '',
      ].join('\n'),
    );
    rs = spawn(RSYSLOGD!, ['-n', '-f', conf, '-i', join(dir, 'rsyslogd.pid')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    rs.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    // Ready when the TCP input accepts a connection.
    await until(
      `rsyslogd to listen (${err})`,
      () => spawnSync('bash', ['-c', `exec 3<>/dev/tcp/127.0.0.1/${tcpPort}`]).status === 0,
      10_000,
    );
  }, 20_000);
  afterAll(() => {
    rs?.kill('SIGTERM');
  });

  it('rsyslog receives each entry over UDP with the facility, severity info and tag', async () => {
    await must('PUT', 'sys/audit/syslog', {
      type: 'syslog',
      options: { facility: 'LOCAL3', tag: 'kh-audit', address: `udp://127.0.0.1:${udpPort}` },
    });
    await must('POST', 'kv/syslogged', { password: 'hunter2' });
    await until(
      'the entry in rsyslog output',
      () => existsSync(out) && readFileSync(out, 'utf8').includes('kv/syslogged'),
    );
    const lines = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .filter((x) => x.includes('kv/syslogged'));
    const [facility, severity, tag, ...rest] = lines[0]!.split(' ');
    expect([facility, severity, tag]).toEqual(['local3', 'info', 'kh-audit']);
    const entry = JSON.parse(rest.join(' ').trim());
    expect(entry.request.path).toBe('kv/syslogged');
    expect(entry.request.data.password).toMatch(/^hmac-sha256:/);
    expect(readFileSync(out, 'utf8')).not.toContain('hunter2');
    await must('DELETE', 'sys/audit/syslog');
  });

  it('and over TCP', async () => {
    await must('PUT', 'sys/audit/syslogtcp', {
      type: 'syslog',
      options: { facility: 'AUTH', address: `tcp://127.0.0.1:${tcpPort}` },
    });
    await must('POST', 'kv/tcp-syslogged', { x: 'y' });
    await until('the TCP entry in rsyslog output', () => readFileSync(out, 'utf8').includes('kv/tcp-syslogged'));
    const line = readFileSync(out, 'utf8')
      .split('\n')
      .find((x) => x.includes('kv/tcp-syslogged'))!;
    expect(line.startsWith('auth info keyhold ')).toBe(true);
    await must('DELETE', 'sys/audit/syslogtcp');
  });
});
