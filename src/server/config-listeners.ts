/** The `listener` stanzas of a config file (Vault's tcp and unix listeners, with TLS and client certificates). */
import type { HclItem, HclValue } from '../framework/hcl.js';
import { parseListenerTelemetry } from '../telemetry/telemetry-config.js';
import { At, describeType, stanzaString, stanzas, str, weakBool } from './config-values.js';

/** A listener from the config file. */
export type ListenerConfig = (
  | { type: 'unix'; path?: string; socket_mode?: number }
  | ({ type: 'tcp'; address: string; tls_cert?: string; tls_key?: string } & ClientCertConfig)
) & { max_request_size?: number; unauthenticated_metrics_access?: boolean };

/** Client certificates on a TLS listener (Vault's tls_require_and_verify_client_cert, tls_client_ca_file, tls_disable_client_certs). */
export interface ClientCertConfig {
  tls_require_and_verify_client_cert?: boolean;
  tls_client_ca_file?: string;
  tls_disable_client_certs?: boolean;
}

const TCP_KEYS = [
  'address',
  'cluster_address',
  'tls_disable',
  'tls_cert_file',
  'tls_key_file',
  'max_request_size',
  'tls_min_version',
  'tls_max_version',
  'max_request_duration',
  'telemetry',
  'tls_require_and_verify_client_cert',
  'tls_client_ca_file',
  'tls_disable_client_certs',
];
const UNIX_KEYS = ['address', 'socket_mode', 'socket_user', 'socket_group', 'max_request_size', 'telemetry'];

export function listenerStanzas(item: HclItem, at: At): ListenerConfig[] {
  const out: ListenerConfig[] = [];
  for (const { type, body, at: lat } of stanzas(item, at)) {
    const t = type.toLowerCase();
    if (t !== 'tcp' && t !== 'unix') lat.fail(`unsupported listener type "${type}" (supported: tcp, unix)`);
    const allowed = t === 'tcp' ? TCP_KEYS : UNIX_KEYS;
    const v: Record<string, { value: HclValue; at: At }> = {};
    for (const p of body.items) {
      const pat = lat.child(p);
      if (!allowed.includes(p.key)) pat.fail(`unknown key (allowed: ${allowed.join(', ')})`);
      if (p.key in v) pat.fail('given twice');
      v[p.key] = { value: p.value, at: pat };
    }
    let maxRequestSize: number | undefined;
    if (v.max_request_size) {
      // Vault: 0 means the default; a negative size means unlimited (we cap at the largest safe size).
      const m = v.max_request_size;
      const n =
        m.value.type === 'number'
          ? m.value.value
          : m.value.type === 'string' && /^\s*-?\d+\s*$/.test(m.value.value)
            ? Number(m.value.value)
            : NaN;
      if (!Number.isSafeInteger(n))
        m.at.fail(
          `must be an integer (bytes), got ${m.value.type === 'string' ? `"${m.value.value}"` : describeType(m.value)}`,
        );
      maxRequestSize = n === 0 ? undefined : n < 0 ? Number.MAX_SAFE_INTEGER : n;
    }
    // telemetry hook (issue 27): `telemetry { unauthenticated_metrics_access = true }`.
    const metricsOpen = v.telemetry
      ? parseListenerTelemetry(v.telemetry.value, (k, why) =>
          new At(lat.file, v.telemetry!.at.line, `${lat.key}.${k}`).fail(why),
        )
      : false;
    if (t === 'unix') {
      const path = v.address ? str(v.address.value, v.address.at, { nonEmpty: true }) : undefined;
      let mode: number | undefined;
      if (v.socket_mode) {
        const s = stanzaString(v.socket_mode.value, v.socket_mode.at);
        if (!/^[0-7]{3,4}$/.test(s)) v.socket_mode.at.fail(`must be an octal mode such as "660", got "${s}"`);
        mode = parseInt(s, 8);
      }
      if (v.socket_user || v.socket_group)
        (v.socket_user ?? v.socket_group)!.at.fail('is not supported (run the daemon as the socket owner)');
      out.push({
        type: 'unix',
        path,
        ...(mode !== undefined ? { socket_mode: mode } : {}),
        ...(maxRequestSize !== undefined ? { max_request_size: maxRequestSize } : {}),
        ...(metricsOpen ? { unauthenticated_metrics_access: true } : {}),
      });
    } else {
      const address = v.address ? str(v.address.value, v.address.at) : '127.0.0.1:8200';
      if (!/^.+:\d+$/.test(address)) (v.address?.at ?? lat).fail(`must be "host:port", got "${address}"`);
      const tlsDisable = v.tls_disable ? weakBool(v.tls_disable.value, v.tls_disable.at) : false;
      const cert = v.tls_cert_file ? str(v.tls_cert_file.value, v.tls_cert_file.at, { nonEmpty: true }) : undefined;
      const key = v.tls_key_file ? str(v.tls_key_file.value, v.tls_key_file.at, { nonEmpty: true }) : undefined;
      if (!tlsDisable && (!cert || !key)) lat.fail('needs tls_cert_file and tls_key_file, or tls_disable = true');
      for (const k of ['cluster_address', 'tls_min_version', 'tls_max_version', 'max_request_duration'])
        if (v[k]) stanzaString(v[k].value, v[k].at);
      const clientCerts: ClientCertConfig = {};
      if (v.tls_require_and_verify_client_cert)
        clientCerts.tls_require_and_verify_client_cert = weakBool(
          v.tls_require_and_verify_client_cert.value,
          v.tls_require_and_verify_client_cert.at,
        );
      if (v.tls_disable_client_certs)
        clientCerts.tls_disable_client_certs = weakBool(
          v.tls_disable_client_certs.value,
          v.tls_disable_client_certs.at,
        );
      if (v.tls_client_ca_file)
        clientCerts.tls_client_ca_file = str(v.tls_client_ca_file.value, v.tls_client_ca_file.at, { nonEmpty: true });
      if (clientCerts.tls_require_and_verify_client_cert && clientCerts.tls_disable_client_certs)
        lat.fail('tls_require_and_verify_client_cert and tls_disable_client_certs exclude each other');
      if (clientCerts.tls_require_and_verify_client_cert && !clientCerts.tls_client_ca_file)
        lat.fail('tls_require_and_verify_client_cert needs tls_client_ca_file');
      if (tlsDisable && Object.keys(clientCerts).length)
        lat.fail('client certificate settings need TLS (tls_disable is set)');
      out.push({
        type: 'tcp',
        address,
        ...(tlsDisable ? {} : { tls_cert: cert, tls_key: key, ...clientCerts }),
        ...(maxRequestSize !== undefined ? { max_request_size: maxRequestSize } : {}),
        ...(metricsOpen ? { unauthenticated_metrics_access: true } : {}),
      });
    }
  }
  return out;
}
