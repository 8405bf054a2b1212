/** The service commands. */
import { group, type Entry } from '../../command.js';
import { install } from './install.js';
import { uninstall } from './uninstall.js';
import { status } from './status.js';

export const serviceCommands: Entry[] = [
  group('service', 'Run the daemon as a user service (systemd on Linux, launchd on macOS)'),
  install,
  uninstall,
  status,
];
