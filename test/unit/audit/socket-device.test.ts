/** The socket audit sink: a listener that stops reading costs a write at most its timeout; UDP lines arrive as datagrams. */
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { SocketSink, socketTargetOf } from '../../../src/audit/socket-device.js';

describe('SocketSink', () => {
  it('fails a write to a listener that never reads after write_timeout, not later', async () => {
    const server = createServer((s) => s.pause());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    const sink = new SocketSink(socketTargetOf({ address: `127.0.0.1:${port}`, write_timeout: '1s' }));
    await sink.open();
    const t0 = Date.now();
    // 64 MiB: far more than the kernel buffers of a connection whose reader stopped.
    const err = await sink.write('x'.repeat(64 * 2 ** 20)).then(
      () => null,
      (e: NodeJS.ErrnoException) => e,
    );
    const took = Date.now() - t0;
    expect(err?.code).toBe('ETIMEDOUT');
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(2500);
    await sink.close();
    server.close();
  });

  it('sends each line as one UDP datagram', async () => {
    const rx = createSocket('udp4');
    await new Promise<void>((r) => rx.bind(0, '127.0.0.1', () => r()));
    const got: string[] = [];
    rx.on('message', (m) => got.push(m.toString('utf8')));
    const sink = new SocketSink(socketTargetOf({ address: `127.0.0.1:${rx.address().port}`, socket_type: 'udp' }));
    await sink.open();
    await sink.write('{"a":1}\n');
    await sink.write('{"b":2}\n');
    for (let i = 0; i < 100 && got.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    expect(got).toEqual(['{"a":1}\n', '{"b":2}\n']);
    await sink.close();
    rx.close();
  });

  it('refuses to open when nothing listens (enable answers 400)', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((r) => server.close(() => r()));
    const sink = new SocketSink(socketTargetOf({ address: `127.0.0.1:${port}` }));
    await expect(sink.open()).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    await sink.close();
  });
});
