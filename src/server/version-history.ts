/**
 * Versions this storage has run under (Vault's sys/version-history): at each unseal the running
 * version is recorded behind the barrier once, with the time it was first seen and the version
 * that ran before it.
 */
import { getJSON, putJSON, type Storage } from '../storage/backend.js';

/** One recorded version. */
export interface VersionEntry {
  timestamp_installed: string;
  previous_version: string;
  build_date: string;
}

const KEY = 'core/versions';

/** Record `version` if this storage has not run it yet (called after unseal, on the node that writes). */
export async function recordVersion(barrier: Storage, version: string, now: number): Promise<void> {
  const all = (await getJSON<Record<string, VersionEntry>>(barrier, KEY)) ?? {};
  if (all[version]) return;
  const latest = Object.entries(all)
    .sort(([, a], [, b]) => a.timestamp_installed.localeCompare(b.timestamp_installed))
    .pop();
  all[version] = {
    timestamp_installed: new Date(now).toISOString(),
    previous_version: latest ? latest[0] : '',
    build_date: '',
  };
  await putJSON(barrier, KEY, all);
}

/** The recorded versions, oldest first, as Vault lists them (keys and key_info). */
export async function versionHistory(
  barrier: Storage,
): Promise<{ keys: string[]; key_info: Record<string, VersionEntry> }> {
  const all = (await getJSON<Record<string, VersionEntry>>(barrier, KEY)) ?? {};
  const keys = Object.keys(all).sort((a, b) => all[a]!.timestamp_installed.localeCompare(all[b]!.timestamp_installed));
  return { keys, key_info: all };
}
