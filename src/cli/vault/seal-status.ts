/** The vault CLI's seal-status table (`vault status`, `vault operator unseal`), from sys/seal-status (+ sys/leader). */
import { rowsTable } from '../secret-output.js';

type Obj = Record<string, unknown>;

/** Key/Value rows as the vault CLI lists them. */
export function sealStatusTable(s: Obj, leader?: Obj): string {
  const rows: Array<[string, string]> = [];
  const recovery = s.recovery_seal === true ? 'Recovery ' : '';
  rows.push(
    [`${recovery}Seal Type`, String(s.type ?? '')],
    ['Initialized', String(Boolean(s.initialized))],
    ['Sealed', String(Boolean(s.sealed))],
  );
  rows.push([`Total ${recovery}Shares`, String(s.n ?? 0)], ['Threshold', String(s.t ?? 0)]);
  if (s.sealed)
    rows.push(
      ['Unseal Progress', `${String(s.progress ?? 0)}/${String(s.t ?? 0)}`],
      ['Unseal Nonce', String(s.nonce ?? '')],
    );
  if (s.migration) rows.push(['Seal Migration in Progress', 'true']);
  rows.push(
    ['Version', String(s.version ?? '')],
    ['Build Date', String(s.build_date ?? '')],
    ['Storage Type', String(s.storage_type ?? '')],
  );
  if (s.cluster_name && s.cluster_id)
    rows.push(['Cluster Name', String(s.cluster_name)], ['Cluster ID', String(s.cluster_id)]);
  const ha = leader?.ha_enabled === true;
  rows.push(['HA Enabled', String(ha)]);
  if (ha && !s.sealed && leader) {
    rows.push(
      ['HA Cluster', String(leader.leader_cluster_address || 'n/a')],
      ['HA Mode', leader.is_self ? 'active' : 'standby'],
    );
    if (leader.is_self && leader.active_time) rows.push(['Active Since', String(leader.active_time)]);
    if (!leader.is_self) rows.push(['Active Node Address', String(leader.leader_address || '<none>')]);
  }
  return rowsTable(rows);
}
