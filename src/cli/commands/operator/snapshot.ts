/**
 * `keyhold operator snapshot save|restore|inspect` (issue 27; vault's operator raft snapshot): a
 * point-in-time snapshot of the whole store, for every storage backend. The snapshot is binary, so
 * save and restore send their own request; inspect reads the file alone (storage/snapshot.ts, loaded
 * when it runs).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { arg, flag, group, type CommandSpec, type Invocation } from '../../command.js';
import { LocalError, ServerError } from '../../errors.js';
import { resolveAddress } from '../../settings.js';

/** One request with a binary body or answer; a JSON error answer becomes a ServerError as with the client. */
function binaryRequest(inv: Invocation, method: 'GET' | 'POST', path: string, body?: Buffer): Promise<Buffer> {
  const address = resolveAddress({ address: inv.globals.address });
  const headers: Record<string, string> = { 'X-Vault-Request': 'true' };
  const token = inv.client.token;
  if (token) headers['X-Vault-Token'] = token;
  if (body) {
    headers['Content-Type'] = 'application/octet-stream';
    headers['Content-Length'] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const onRes = (r: IncomingMessage) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('error', reject);
      r.on('end', () => {
        const buf = Buffer.concat(chunks);
        if ((r.statusCode ?? 0) < 400) return resolve(buf);
        let parsed: Record<string, unknown> | null = null;
        try {
          parsed = JSON.parse(buf.toString('utf8')) as Record<string, unknown>;
        } catch {
          /* not JSON */
        }
        const errs = Array.isArray(parsed?.errors) ? (parsed.errors as string[]) : [];
        reject(new ServerError(r.statusCode ?? 0, errs, parsed, `${method} ${path}`));
      });
    };
    const urlPath = `/v1/${path}`;
    let req: ReturnType<typeof httpRequest>;
    if (address.startsWith('unix://'))
      req = httpRequest({ socketPath: address.slice(7), path: urlPath, method, headers }, onRes);
    else {
      const u = new URL(address);
      const skip = /^(1|true)$/i.test(process.env.KEYHOLD_SKIP_VERIFY ?? process.env.VAULT_SKIP_VERIFY ?? '');
      const opts = {
        host: u.hostname.replace(/^\[|\]$/g, ''),
        port: u.port || (u.protocol === 'https:' ? 443 : 80),
        path: (u.pathname.replace(/\/$/, '') || '') + urlPath,
        method,
        headers,
      };
      req =
        u.protocol === 'https:'
          ? httpsRequest({ ...opts, rejectUnauthorized: !skip }, onRes)
          : httpRequest(opts, onRes);
    }
    req.on('error', (e: Error) => reject(new LocalError(`cannot reach keyhold at ${address}: ${e.message}`)));
    req.end(body);
  });
}

/** A snapshot file's bytes. */
function readSnapshotFile(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new LocalError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

export const snapshotGroup = group(
  'operator snapshot',
  'Save, restore and inspect snapshots of the whole store (any storage backend)',
);

export const snapshotSave: CommandSpec = {
  words: ['operator', 'snapshot', 'save'],
  summary: 'Save a point-in-time snapshot of the store to FILE (sudo); writes go on meanwhile',
  args: [arg('file', 'where to write the snapshot (mode 0600)')],
  examples: ['keyhold operator snapshot save backup.snap'],
  async run(inv) {
    const file: string = inv.args.file;
    const buf = await binaryRequest(inv, 'GET', 'sys/storage/raft/snapshot');
    const { decodeSnapshot } = await import('../../../storage/snapshot.js');
    const snap = decodeSnapshot(buf);
    const tmp = `${file}.partial`;
    writeFileSync(tmp, buf, { mode: 0o600 });
    renameSync(tmp, file);
    inv.success(`Success! Snapshot saved to ${file} (index ${snap.header.index}, ${snap.manifest.records} records)`);
  },
};

export const snapshotRestore: CommandSpec = {
  words: ['operator', 'snapshot', 'restore'],
  summary:
    'Restore a snapshot onto the running node (sudo); -force for one of a store with another keyring (the node then seals)',
  args: [arg('file', 'snapshot file')],
  flags: [flag('--force', 'restore a snapshot taken from a store with another keyring')],
  examples: [
    'keyhold operator snapshot restore backup.snap',
    'keyhold operator snapshot restore -force other-store.snap',
  ],
  async run(inv) {
    const force = Boolean(inv.opts.force);
    const buf = readSnapshotFile(inv.args.file);
    await binaryRequest(inv, 'POST', force ? 'sys/storage/raft/snapshot-force' : 'sys/storage/raft/snapshot', buf);
    inv.success(
      force
        ? "Success! Snapshot restored. If it came from another keyring the node is sealed: unseal it with that store's keys."
        : 'Success! Snapshot restored.',
    );
  },
};

export const snapshotInspect: CommandSpec = {
  words: ['operator', 'snapshot', 'inspect'],
  summary:
    'Check a snapshot file and show its index, time, keyring term, record count and checksums (no server needed)',
  args: [arg('file', 'snapshot file')],
  examples: [
    'keyhold operator snapshot inspect backup.snap',
    'keyhold operator snapshot inspect backup.snap --format json',
  ],
  async run(inv) {
    const file: string = inv.args.file;
    const { decodeSnapshot, SnapshotError } = await import('../../../storage/snapshot.js');
    let snap: ReturnType<typeof decodeSnapshot>;
    try {
      snap = decodeSnapshot(readSnapshotFile(file));
    } catch (e) {
      if (e instanceof SnapshotError) throw new LocalError(`${file}: ${e.message}`);
      throw e;
    }
    const h = snap.header;
    const g = inv.globals;
    if (g.field || (g.format && g.format !== 'table')) {
      const { index, created, term, storage_id, backend, version } = h;
      return inv.print({
        index,
        created,
        term,
        records: snap.manifest.records,
        storage_id,
        backend,
        version,
        sha256: snap.sha256,
        records_sha256: snap.manifest.records_sha256,
      });
    }
    await inv.print({
      Index: h.index,
      Created: h.created,
      'Keyring Term': h.term,
      Records: snap.manifest.records,
      'Storage ID': h.storage_id,
      Backend: h.backend,
      Version: h.version,
      'SHA-256': snap.sha256,
      'Records SHA-256': snap.manifest.records_sha256,
    });
  },
};
