/** `keyhold transit ...` commands (transit-keys). */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** Register the transit-keys commands. */
export function register(_program: Command, _ctx: CliContext): void {}
