/** `keyhold service status`: installed, enabled, running, and whether the daemon answers (exit 1 when not installed). */
import { existsSync } from 'node:fs';
import type { CommandSpec } from '../../command.js';
import { defaultSocket } from '../../../framework/paths.js';
import { LAUNCHD_LABEL, SYSTEMD_UNIT, serviceFile } from '../../service.js';
import { firstLine, manager, run, uid, type Ran } from './system.js';

export const status: CommandSpec = {
  words: ['service', 'status'],
  summary:
    'Whether the user service is installed, enabled and running, and whether the daemon answers (exit 1 when not installed)',
  examples: ['keyhold service status', 'keyhold service status --format json'],
  async run(inv) {
    const m = manager();
    const file = serviceFile(m);
    const installed = existsSync(file);
    const state = (r: Ran) => r.out.split('\n')[0] || `unknown (${firstLine(r)})`;
    let enabled: string;
    let active: string;
    if (m === 'systemd') {
      enabled = state(run('systemctl', ['--user', 'is-enabled', SYSTEMD_UNIT]));
      active = state(run('systemctl', ['--user', 'is-active', SYSTEMD_UNIT]));
    } else {
      const r = run('launchctl', ['print', `gui/${uid()}/${LAUNCHD_LABEL}`]);
      enabled = r.ok ? 'loaded' : 'not loaded';
      active = /state = running/.test(r.out) ? 'active' : r.ok ? 'inactive' : 'unknown';
    }
    const socket = defaultSocket();
    let daemon = 'not answering';
    try {
      const { rawRequest } = await import('../../raw-request.js');
      const s = (await rawRequest('GET', `unix://${socket}`, 'sys/seal-status', undefined)) ?? {};
      daemon = `answering (sealed: ${String(s.sealed)}, version ${String(s.version)})`;
    } catch {
      // Not running, or not on the default socket: said in the table.
    }
    await inv.print({ manager: m, file, installed, enabled, active, socket: `unix://${socket}`, daemon });
    return installed ? 0 : 1;
  },
};
