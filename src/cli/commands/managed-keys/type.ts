/** What the managed-keys commands share: the two types and the route they derive flags from. */
import type { ArgSpec } from '../../command.js';
import { LocalError } from '../../errors.js';

const TYPES = ['pkcs11', 'awskms'];

/** A known managed key type, or a usage error naming the types. */
export function typeArg(t: string): string {
  if (!TYPES.includes(t)) throw new LocalError(`unknown managed key type "${t}"; one of: ${TYPES.join(', ')}`);
  return t;
}

export const enc = encodeURIComponent;

/** TYPE and NAME arguments. */
export const TYPE_ARG: ArgSpec = { name: 'type', help: 'pkcs11 or awskms' };
export const NAME_ARG: ArgSpec = { name: 'name', help: 'managed key name' };
