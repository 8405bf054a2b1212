/** `keyhold docs ...` commands. */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** Register the docs commands. */
export function register(_program: Command, _ctx: CliContext): void {}
