/** `keyhold managed-keys test-sign TYPE NAME`: sign random data and verify it (flags from the route). */
import type { CommandSpec } from '../../command.js';
import { fieldFlag, givenOf, routeAt } from '../../route-flags.js';
import { managedKeyRoutes } from '../../../engines/sys/managed-key-routes.js';
import { NAME_ARG, TYPE_ARG, enc, typeArg } from './type.js';

const TEST_SIGN = routeAt(managedKeyRoutes, 'managed-keys/:type/:name/test/sign');
const fields = [
  fieldFlag(TEST_SIGN, 'use_pss', { switch: true }),
  fieldFlag(TEST_SIGN, 'hash_algorithm', { value: 'hash' }),
];

export const testSign: CommandSpec = {
  words: ['managed-keys', 'test-sign'],
  summary: 'Sign random data with the key and verify the signature (generates the key when allowed and missing)',
  args: [TYPE_ARG, NAME_ARG],
  flags: fields,
  async run(inv) {
    const { type, name } = inv.args as { type: string; name: string };
    await inv.client.write(`sys/managed-keys/${enc(typeArg(type))}/${enc(name)}/test/sign`, givenOf(fields, inv.opts));
    inv.success(`Success! Managed key ${name} signed and verified.`);
  },
};
