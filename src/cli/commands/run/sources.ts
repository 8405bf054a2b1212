/** The variables `keyhold run` and `keyhold env` resolve: the environment, then an env file (which wins). */
import { chmodSync, closeSync, openSync, writeSync } from 'node:fs';
import { LocalError } from '../../errors.js';
import { findRefs, readDotenv, type SecretRef } from '../../secret-refs.js';
import { parseDuration } from '../../../framework/fields.js';

export interface Sources {
  /** The variables to resolve or pass: the environment, then the env file (file wins). */
  env: Record<string, string>;
  /** Names that came from the env file (keyhold env prints these and every reference). */
  fromFile: Set<string>;
  refs: SecretRef[];
}

export function sources(envFile: string | undefined): Sources {
  const file = envFile ? readDotenv(envFile) : {};
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  Object.assign(env, file);
  return { env, fromFile: new Set(Object.keys(file)), refs: findRefs(env) };
}

export function durationOpt(name: string) {
  return (v: string): number => {
    try {
      return parseDuration(name, v);
    } catch (e) {
      throw new LocalError((e as Error).message);
    }
  };
}

/** Write `text` to `file` with mode 0600 (also when the file existed with a wider mode). */
export function writePrivate(file: string, text: string): void {
  let fd: number;
  try {
    fd = openSync(file, 'w', 0o600);
  } catch (e) {
    throw new LocalError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    chmodSync(file, 0o600);
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
