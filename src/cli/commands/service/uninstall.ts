/** `keyhold service uninstall`: stop and disable the user service and remove its unit or plist. */
import { existsSync, rmSync } from 'node:fs';
import type { CommandSpec } from '../../command.js';
import { LAUNCHD_LABEL, SYSTEMD_UNIT, serviceFile } from '../../service.js';
import { firstLine, manager, run, uid } from './system.js';

export const uninstall: CommandSpec = {
  words: ['service', 'uninstall'],
  summary: 'Stop and disable the user service and remove its unit or plist',
  examples: ['keyhold service uninstall'],
  run(inv) {
    const m = manager();
    const file = serviceFile(m);
    if (m === 'systemd') {
      const r = run('systemctl', ['--user', 'disable', '--now', SYSTEMD_UNIT]);
      if (!r.ok && existsSync(file))
        inv.io.stderr.write(`warning: systemctl --user disable --now ${SYSTEMD_UNIT}: ${firstLine(r)}\n`);
    } else run('launchctl', ['bootout', `gui/${uid()}/${LAUNCHD_LABEL}`]);
    const had = existsSync(file);
    rmSync(file, { force: true });
    if (m === 'systemd') run('systemctl', ['--user', 'daemon-reload']);
    inv.success(had ? `Success! Removed ${file}` : `Success! Nothing to remove: ${file} does not exist`);
  },
};
