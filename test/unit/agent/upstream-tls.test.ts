/**
 * How the agent words a failed TLS connection (src/agent/upstream.ts describeTlsFailure): the
 * server's alerts and a bare reset after the handshake name the client certificate presented; an
 * untrusted server certificate points at ca_cert; anything else is left to the raw error code.
 */
import { describe, expect, it } from 'vitest';
import { describeTlsFailure } from '../../../src/agent/upstream.js';

const origin = { setting: 'auto_auth cert client_cert', file: './client.pem' };

describe('describeTlsFailure', () => {
  it('names the certificate the server refused (alert, or a reset right after the handshake)', () => {
    expect(describeTlsFailure('ERR_SSL_TLSV1_ALERT_UNKNOWN_CA', 'x', false, origin)).toMatch(
      /^the server refused the client certificate \.\/client\.pem \(auto_auth cert client_cert\) during the TLS handshake \(ERR_SSL_TLSV1_ALERT_UNKNOWN_CA\)/,
    );
    expect(describeTlsFailure('ECONNRESET', 'socket hang up', true, origin)).toMatch(
      /closed the connection right after the TLS handshake: it did not accept the client certificate \.\/client\.pem/,
    );
    // A reset before the handshake completed, or without a certificate, says nothing about one.
    expect(describeTlsFailure('ECONNRESET', 'socket hang up', false, origin)).toBeUndefined();
    expect(describeTlsFailure('ECONNRESET', 'socket hang up', true, undefined)).toBeUndefined();
  });

  it('asks for a certificate when the server requires one and none was sent', () => {
    expect(describeTlsFailure('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'x', true, undefined)).toMatch(
      /requires a client certificate: set vault\.client_cert and vault\.client_key/,
    );
    expect(describeTlsFailure('ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED', 'x', true, origin)).toMatch(
      /requires a client certificate and did not take the client certificate \.\/client\.pem/,
    );
  });

  it("points at ca_cert when the server's certificate is not trusted, and leaves other errors alone", () => {
    for (const code of [
      'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
      'DEPTH_ZERO_SELF_SIGNED_CERT',
      'ERR_TLS_CERT_ALTNAME_INVALID',
    ])
      expect(describeTlsFailure(code, 'x', false, origin)).toMatch(/server's TLS certificate is not trusted .*ca_cert/);
    expect(describeTlsFailure('ECONNREFUSED', 'connect ECONNREFUSED', false, origin)).toBeUndefined();
  });
});
