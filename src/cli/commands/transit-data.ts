/** `keyhold transit ...` commands (transit-data). */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** Register the transit-data commands. */
export function register(_program: Command, _ctx: CliContext): void {}
