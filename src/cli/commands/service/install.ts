/**
 * `keyhold service install`: write the user service for `keyhold server` (systemd user unit on Linux,
 * launchd agent on macOS; texts in src/cli/service.ts), enable it at login and start it.
 */
import { isSingleExecutable } from '../../../native/embedded-addon.js';
import { existsSync, realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { flag, type CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { defaultSocket } from '../../../framework/paths.js';
import {
  LAUNCHD_LABEL,
  SYSTEMD_UNIT,
  serviceFile,
  serviceText,
  type ServiceManager,
  type ServiceSpec,
} from '../../service.js';
import { configSocket, firstLine, manager, run, uid, writeAtomically } from './system.js';

/** Enable and start the written unit or plist. */
function start(m: ServiceManager, file: string): void {
  const steps: [string, string[]][] =
    m === 'systemd'
      ? [
          ['systemctl', ['--user', 'daemon-reload']],
          ['systemctl', ['--user', 'enable', '--now', SYSTEMD_UNIT]],
        ]
      : [['launchctl', ['bootstrap', `gui/${uid()}`, file]]];
  // A reinstall replaces a loaded agent: launchd refuses to bootstrap a label twice.
  if (m === 'launchd') run('launchctl', ['bootout', `gui/${uid()}/${LAUNCHD_LABEL}`]);
  for (const [cmd, args] of steps) {
    const r = run(cmd, args);
    if (!r.ok)
      throw new LocalError(
        `${cmd} ${args.join(' ')} failed: ${firstLine(r)} (the ${m === 'systemd' ? 'unit' : 'plist'} is written at ${file})`,
      );
  }
}

export const install: CommandSpec = {
  words: ['service', 'install'],
  summary: 'Write the user service for `keyhold server`, enable it at login and start it (restarted on failure)',
  flags: [
    flag('--config <file>', 'config file for the daemon (see `keyhold server --config`)'),
    flag('--no-start', 'only write the unit or plist; do not enable or start it'),
  ],
  examples: ['keyhold service install', 'keyhold service install --config ~/.config/keyhold/server.json'],
  run(inv) {
    const opts = inv.opts as { config?: string; start: boolean };
    const m = manager();
    let config: string | undefined;
    if (opts.config) {
      config = resolve(opts.config);
      if (!existsSync(config) || !statSync(config).isFile()) throw new LocalError(`--config: ${config} is not a file`);
    }
    const env: Record<string, string> = {};
    if (process.env.KEYHOLD_HOME) env.KEYHOLD_HOME = resolve(process.env.KEYHOLD_HOME);
    // The installed shim itself (npm's bin link resolved), run by this very node binary.
    // The installed shim itself (npm's bin link resolved), run by this very node binary; the single
    // executable runs itself.
    const script = isSingleExecutable() ? {} : { script: realpathSync(process.argv[1]!) };
    const spec: ServiceSpec = { node: process.execPath, ...script, ...(config ? { config } : {}), env };
    const file = serviceFile(m);
    writeAtomically(file, serviceText(m, spec));
    if (opts.start) start(m, file);
    const socket = (config && configSocket(config)) || defaultSocket({ ...process.env, ...env });
    inv.success(
      `Success! ${m === 'systemd' ? SYSTEMD_UNIT : LAUNCHD_LABEL} written to ${file}${opts.start ? ', enabled and started' : ' (not started: --no-start)'}`,
    );
    inv.io.stderr.write(
      `The daemon listens on unix://${socket}${socket === defaultSocket() ? ', where the CLI looks by default' : `: set KEYHOLD_ADDR=unix://${socket} for the CLI`}.\n`,
    );
  },
};
