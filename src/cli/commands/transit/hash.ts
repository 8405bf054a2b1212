/** `keyhold transit hash [ALGORITHM]`: digest of stdin (or --file). */
import { flag, optArg, type CommandSpec } from '../../command.js';
import { INPUT, MOUNT, dataOf, inputBase64, mountOf, structured, writeOut } from './io.js';

export const hash: CommandSpec = {
  words: ['transit', 'hash'],
  summary: 'Hash stdin (or --file); prints the digest (hex by default)',
  args: [optArg('algorithm', 'sha2-256 (default), sha2-224/384/512, sha3-224/256/384/512')],
  flags: [MOUNT, ...INPUT, flag('--encoding <enc>', 'hex (default) or base64')],
  stdin: 'the bytes to hash (unless --file)',
  async run(inv) {
    const body: Record<string, unknown> = { input: await inputBase64(inv) };
    if (inv.args.algorithm !== undefined) body.algorithm = inv.args.algorithm;
    if (inv.opts.encoding !== undefined) body.format = inv.opts.encoding;
    const res = await inv.client.write(`${mountOf(inv)}/hash`, body);
    const data = dataOf(res);
    if (structured(inv)) return inv.print(data);
    await writeOut(inv, String(data.sum ?? '') + '\n');
  },
};
