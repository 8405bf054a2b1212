/** `keyhold transit ...` commands: key management (transit-keys.ts) and data operations (transit-data.ts). */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';
import * as keys from './transit-keys.js';
import * as data from './transit-data.js';

/** Register all transit commands. */
export function register(program: Command, ctx: CliContext): void {
  keys.register(program, ctx);
  data.register(program, ctx);
}
