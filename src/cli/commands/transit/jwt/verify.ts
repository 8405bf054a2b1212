/**
 * `keyhold transit jwt verify NAME`: the JWT comes from stdin or a file (it is a bearer credential:
 * never argv); prints its claims; exit 0 when valid, 1 when not.
 */
import { flag, type CommandSpec } from '../../../command.js';
import { LocalError } from '../../../errors.js';
import { bodyOf, fieldFlag } from '../../../route-flags.js';
import { MOUNT, dataOf, inputBytes, mountOf, seg, structured, writeOut } from '../io.js';
import { JWT_VERIFY } from '../routes.js';

const fields = [
  fieldFlag(JWT_VERIFY, 'iss', { value: 'issuer' }),
  fieldFlag(JWT_VERIFY, 'aud', { value: 'audience', help: 'accepted audience (comma-separated for several)' }),
  fieldFlag(JWT_VERIFY, 'leeway'),
];

export const jwtVerify: CommandSpec = {
  words: ['transit', 'jwt', 'verify'],
  summary: 'Verify a JWT (stdin or --file) signed by a transit key; prints its claims; exit 0 when valid, 1 when not',
  args: [{ name: 'name', help: 'key name' }],
  flags: [MOUNT, flag('--file <path>', 'read the JWT from this file instead of stdin'), ...fields],
  stdin: 'the JWT (unless --file)',
  examples: [
    'keyhold transit jwt verify issuer --aud ci < token.jwt',
    'keyhold transit jwt verify issuer --file token.jwt --format json',
  ],
  async run(inv) {
    const token = (await inputBytes(inv)).toString('utf8').trim();
    if (!token) throw new LocalError('no JWT given (stdin or --file)');
    const body: Record<string, unknown> = { token, ...bodyOf(fields, inv.opts) };
    const res = await inv.client.write(`${mountOf(inv)}/jwt/verify/${seg(inv.args.name)}`, body);
    const data = dataOf(res);
    if (structured(inv)) await inv.print(data);
    else if (data.valid === true) await writeOut(inv, JSON.stringify(data.claims, null, 2) + '\n');
    else inv.io.stderr.write(`Verification failure: ${String(data.error ?? 'invalid')}\n`);
    return data.valid === true ? 0 : 1;
  },
};
