/**
 * `keyhold service`: the daemon as a per-user service. On Linux a systemd user unit
 * (~/.config/systemd/user/keyhold.service), on macOS a launchd agent
 * (~/Library/LaunchAgents/dev.keyhold.server.plist). Both restart the daemon when it fails (not when
 * it is stopped on purpose) and start it at login. Neither passes --socket: the daemon then listens
 * on the default socket, which the CLI finds by itself (`$XDG_RUNTIME_DIR/keyhold/keyhold.sock`,
 * which systemd sets for user services as for the login session; `~/.local/share/keyhold/run` on
 * macOS). KEYHOLD_HOME, when set at install time, is passed on so daemon and CLI agree.
 *
 * This module only builds texts and paths; src/cli/commands/service/ runs systemctl and launchctl.
 * Sources: systemd.service(5), systemd.exec(5) and systemd.syntax(7) for quoting and specifiers;
 * launchd.plist(5) for the agent's keys.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What the service runs. */
export interface ServiceSpec {
  /** Absolute path of the node binary. */
  node: string;
  /** Absolute path of bin/keyhold.js; absent when `node` is the single executable itself. */
  script?: string;
  /** Absolute path of the config file, if any. */
  config?: string;
  /** Environment for the daemon (only KEYHOLD_HOME today). */
  env: Record<string, string>;
}

/** The service managers keyhold supports. */
export type ServiceManager = 'systemd' | 'launchd';

/** systemd unit name. */
export const SYSTEMD_UNIT = 'keyhold.service';
/** launchd job label (reverse-DNS, as launchd.plist(5) asks). */
export const LAUNCHD_LABEL = 'dev.keyhold.server';

/** The manager of `platform`, or null where keyhold has none. */
export function managerOf(platform: NodeJS.Platform): ServiceManager | null {
  return platform === 'linux' ? 'systemd' : platform === 'darwin' ? 'launchd' : null;
}

/** Where the unit or plist lives for this user. */
export function serviceFile(manager: ServiceManager, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME || homedir();
  if (manager === 'launchd') return join(home, 'Library', 'LaunchAgents', `${LAUNCHD_LABEL}.plist`);
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'systemd', 'user', SYSTEMD_UNIT);
}

/** The daemon's argv after node. */
function serverArgs(spec: ServiceSpec): string[] {
  return [...(spec.script ? [spec.script] : []), 'server', ...(spec.config ? ['--config', spec.config] : [])];
}

/**
 * One ExecStart/Environment word, quoted for systemd: double quotes with `\` and `"` escaped
 * (systemd.syntax(7)), `%` doubled (unit specifiers, systemd.unit(5)) and `$` doubled (variable
 * expansion in Exec lines, systemd.service(5)), so any path reaches the daemon as it is.
 */
export function systemdQuote(word: string, inExec = true): string {
  if (/[\n\r\0]/.test(word)) throw new Error('a path with a newline or NUL cannot go into a systemd unit');
  let w = word.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/%/g, '%%');
  if (inExec) w = w.replace(/\$/g, '$$$$');
  return `"${w}"`;
}

/** The systemd user unit. */
export function systemdUnit(spec: ServiceSpec): string {
  const exec = [spec.node, ...serverArgs(spec)].map((w) => systemdQuote(w)).join(' ');
  const env = Object.entries(spec.env).map(([k, v]) => `Environment=${systemdQuote(`${k}=${v}`, false)}`);
  return [
    '# Written by `keyhold service install`; `keyhold service uninstall` removes it.',
    '[Unit]',
    'Description=keyhold key-management daemon',
    'Documentation=man:keyhold-server(1)',
    '',
    '[Service]',
    'Type=simple',
    `ExecStart=${exec}`,
    ...env,
    // Restart after a crash or a non-zero exit, not after `systemctl --user stop` (which exits 0).
    'Restart=on-failure',
    'RestartSec=2s',
    // SIGTERM: the daemon finishes requests in flight (up to 10 s), seals and removes its socket.
    'KillSignal=SIGTERM',
    'TimeoutStopSec=20s',
    'UMask=0077',
    'NoNewPrivileges=yes',
    '',
    '[Install]',
    'WantedBy=default.target',
    '',
  ].join('\n');
}

function xml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** The launchd agent plist. */
export function launchdPlist(spec: ServiceSpec, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME || homedir();
  const log = join(home, 'Library', 'Logs', 'keyhold.log');
  const str = (s: string) => `<string>${xml(s)}</string>`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<!-- Written by `keyhold service install`; `keyhold service uninstall` removes it. -->',
    '<plist version="1.0">',
    '<dict>',
    '  <key>Label</key>',
    `  ${str(LAUNCHD_LABEL)}`,
    '  <key>ProgramArguments</key>',
    '  <array>',
    ...[spec.node, ...serverArgs(spec)].map((a) => `    ${str(a)}`),
    '  </array>',
    '  <key>RunAtLoad</key>',
    '  <true/>',
    // Restart when the daemon exits with a failure; an orderly stop (exit 0) stays stopped.
    '  <key>KeepAlive</key>',
    '  <dict>',
    '    <key>SuccessfulExit</key>',
    '    <false/>',
    '  </dict>',
    '  <key>ThrottleInterval</key>',
    '  <integer>10</integer>',
    '  <key>ProcessType</key>',
    '  <string>Background</string>',
    '  <key>Umask</key>',
    '  <integer>63</integer>',
    '  <key>StandardOutPath</key>',
    `  ${str(log)}`,
    '  <key>StandardErrorPath</key>',
    `  ${str(log)}`,
  ];
  const envKeys = Object.keys(spec.env);
  if (envKeys.length) {
    lines.push('  <key>EnvironmentVariables</key>', '  <dict>');
    for (const k of envKeys) lines.push(`    <key>${xml(k)}</key>`, `    ${str(spec.env[k]!)}`);
    lines.push('  </dict>');
  }
  lines.push('</dict>', '</plist>', '');
  return lines.join('\n');
}

/** The file text for `manager`. */
export function serviceText(manager: ServiceManager, spec: ServiceSpec, env: NodeJS.ProcessEnv = process.env): string {
  return manager === 'systemd' ? systemdUnit(spec) : launchdPlist(spec, env);
}
