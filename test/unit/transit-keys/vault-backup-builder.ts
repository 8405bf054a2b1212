/**
 * Hand-built Vault backup blobs for tests, written as text (not through keyhold's encoder) so big
 * integers appear as bare JSON numbers exactly as Go writes them (reference transit-wire.md 5.2).
 */

/** One KeyEntry; EC values as hex, everything else already encoded. */
export interface EntrySpec {
  key?: string | null;
  hmac_key?: string | null;
  time?: string;
  ec?: { x: string; y: string; d?: string };
  public_key?: string;
  creation_time?: number;
}

const dec = (hex: string) => BigInt('0x' + hex).toString(10);

function entryText(e: EntrySpec): string {
  const parts = [
    `"key":${e.key ? JSON.stringify(e.key) : 'null'}`,
    `"hmac_key":${e.hmac_key ? JSON.stringify(e.hmac_key) : 'null'}`,
    `"time":${JSON.stringify(e.time ?? '2025-03-01T10:00:00Z')}`,
  ];
  if (e.ec) parts.push(`"ec_x":${dec(e.ec.x)}`, `"ec_y":${dec(e.ec.y)}`, `"ec_d":${e.ec.d ? dec(e.ec.d) : 'null'}`);
  parts.push(`"public_key":${JSON.stringify(e.public_key ?? '')}`, `"creation_time":${e.creation_time ?? 1740823200}`);
  return `{${parts.join(',')}}`;
}

/** A backup of `name` with versions 1..n (`entries[i]` is version i+1), Vault type number `type`. */
export function vaultBackup(
  name: string,
  type: number,
  entries: EntrySpec[],
  extra: Record<string, unknown> = {},
): string {
  const keys = entries.map((e, i) => `"${i + 1}":${entryText(e)}`).join(',');
  const archive = [
    entryText({ key: null, hmac_key: null, time: '0001-01-01T00:00:00Z', creation_time: 0 }),
    ...entries.map(entryText),
  ].join(',');
  const policy = {
    derived: false,
    kdf: 0,
    convergent_encryption: false,
    exportable: true,
    min_decryption_version: 1,
    min_encryption_version: 0,
    latest_version: entries.length,
    archive_version: entries.length,
    archive_min_version: 0,
    min_available_version: 0,
    deletion_allowed: false,
    convergent_version: 0,
    type,
    backup_info: null,
    restore_info: null,
    allow_plaintext_backup: true,
    version_template: '',
    storage_prefix: '',
    auto_rotate_period: 0,
    Imported: false,
    AllowImportedKeyRotation: false,
    ...extra,
  };
  const rest = JSON.stringify(policy).slice(1, -1);
  const text = `{"policy":{"name":${JSON.stringify(name)},"keys":{${keys}},${rest}},"archived_keys":{"keys":[${archive}]}}\n`;
  return Buffer.from(text).toString('base64');
}
