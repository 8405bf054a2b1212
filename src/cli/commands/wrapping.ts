/** `keyhold unwrap [TOKEN]`: read a response-wrapping token's answer, once (as `vault unwrap`). */
import type { Command } from 'commander';
import type { CliContext } from '../context.js';

/** Register the wrapping commands. */
export function register(program: Command, ctx: CliContext): void {
  program
    .command('unwrap')
    .description('Unwrap a response-wrapping token (TOKEN, - for stdin, @file; default: the current token); works once')
    .argument('[token]', 'wrapping token, - (stdin) or @file; without it the client token is the wrapping token')
    .action(async (token: string | undefined, _o, cmd: Command) => {
      const client = ctx.client(cmd);
      const t = token === undefined ? undefined : (await ctx.valueOf(token)).trim();
      const res = await client.request('POST', 'sys/wrapping/unwrap', t ? { token: t } : {});
      const b = res.body as { data?: unknown; auth?: unknown } | undefined;
      await ctx.print(cmd, b?.data ?? b?.auth ?? b);
    });
}
