/** Default locations (per user): state dir for storage, runtime dir for the socket, config dir for the CLI token. */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** `$KEYHOLD_HOME`, else `$XDG_DATA_HOME/keyhold`, else `~/.local/share/keyhold`. */
export function stateDir(env = process.env): string {
  return env.KEYHOLD_HOME ?? join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'keyhold');
}

/** `$XDG_RUNTIME_DIR/keyhold`, else `<state dir>/run`. */
export function runtimeDir(env = process.env): string {
  if (env.KEYHOLD_HOME) return join(env.KEYHOLD_HOME, 'run');
  return env.XDG_RUNTIME_DIR ? join(env.XDG_RUNTIME_DIR, 'keyhold') : join(stateDir(env), 'run');
}

/** Default Unix socket path. */
export function defaultSocket(env = process.env): string {
  return join(runtimeDir(env), 'keyhold.sock');
}

/** Default file-storage directory. */
export function defaultStoragePath(env = process.env): string {
  return join(stateDir(env), 'data');
}

/** Where `keyhold login` saves the token (mode 0600). */
export function tokenFile(env = process.env): string {
  if (env.KEYHOLD_HOME) return join(env.KEYHOLD_HOME, 'token');
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'keyhold', 'token');
}
