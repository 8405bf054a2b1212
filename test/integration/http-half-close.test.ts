import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, startDaemon, type Daemon } from '../support/daemon.js';

// A client may half-close its socket (send FIN) right after the request; node:http's own server
// answers anyway (allowHalfOpen). Our listeners feed sockets to node:http, so they must allow it too.
describe('half-closed client connections', () => {
  let d: Daemon;
  beforeAll(async () => {
    d = await startDaemon();
  });
  afterAll(async () => {
    await d.stop();
    cleanup(d.dir);
  });

  function halfClose(request: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const s = connect(d.socket, () => s.end(request)); // write, then FIN at once
      s.on('data', (c: Buffer) => chunks.push(c));
      s.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      s.on('error', reject);
    });
  }

  it('still answers a request whose handler takes a while (RSA key generation) after the client sent FIN', async () => {
    const body = JSON.stringify({ type: 'rsa-2048' });
    const answer = await halfClose(
      `POST /v1/transit/keys/halfclosed HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 (200|204) /);
    const read = await d.req('GET', 'transit/keys/halfclosed');
    expect(read.status).toBe(200);
    expect(read.body.data.type).toBe('rsa-2048');
  });

  it('answers a LIST sent on a half-closed connection', async () => {
    const answer = await halfClose('LIST /v1/transit/keys HTTP/1.1\r\nHost: x\r\nX-Vault-Token: root\r\n\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer).toContain('"halfclosed"');
  });
});
