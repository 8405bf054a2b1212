/** `keyhold transit verify NAME`: check a signature or HMAC of stdin (or --file); exit 0 valid, 1 not. */
import type { CommandSpec } from '../../command.js';
import { LocalError } from '../../errors.js';
import { bodyOf, fieldFlag } from '../../route-flags.js';
import { INPUT, MOUNT, dataOf, inputBase64, mountOf, seg, structured, writeOut } from './io.js';
import { VERIFY } from './routes.js';
import { signatureFlags } from './signature.js';

const fields = signatureFlags(VERIFY);
const checked = [
  fieldFlag(VERIFY, 'signature', { value: 'sig', help: 'signature to check (vault:vN:...; @file or - allowed)' }),
  fieldFlag(VERIFY, 'hmac', { value: 'hmac', help: 'HMAC to check (vault:vN:...; @file or - allowed)' }),
];

export const verify: CommandSpec = {
  words: ['transit', 'verify'],
  summary: 'Verify a signature or HMAC of stdin (or --file); exit 0 when valid, 1 when not',
  args: [{ name: 'name', help: 'key name' }],
  flags: [MOUNT, ...INPUT, ...fields, ...checked],
  stdin: 'the signed bytes (unless --file)',
  async run(inv) {
    const o = inv.opts;
    if (!o.signature === !o.hmac) throw new LocalError('give exactly one of --signature or --hmac');
    const body: Record<string, unknown> = { input: await inputBase64(inv) };
    if (o.signature) body.signature = (await inv.valueOf(o.signature)).trim();
    if (o.hmac) body.hmac = (await inv.valueOf(o.hmac)).trim();
    Object.assign(body, bodyOf(fields, o));
    const res = await inv.client.write(`${mountOf(inv)}/verify/${seg(inv.args.name)}`, body);
    const data = dataOf(res);
    if (structured(inv)) await inv.print(data);
    else await writeOut(inv, data.valid === true ? 'Verified OK\n' : 'Verification failure\n');
    return data.valid === true ? 0 : 1;
  },
};
