/** The signature flags sign and verify share, derived from each route's fields. */
import type { AnyRoute } from '../../../framework/route.js';
import type { FlagSpec } from '../../command.js';
import { fieldFlag } from '../../route-flags.js';

/** --hash-algorithm, --prehashed, --signature-algorithm, --marshaling-algorithm, --salt-length, --context. */
export function signatureFlags(route: AnyRoute): FlagSpec[] {
  return [
    fieldFlag(route, 'hash_algorithm', { value: 'alg' }),
    fieldFlag(route, 'prehashed', { switch: true }),
    fieldFlag(route, 'signature_algorithm', { value: 'alg' }),
    fieldFlag(route, 'marshaling_algorithm', { value: 'alg' }),
    fieldFlag(route, 'salt_length', { value: 'len' }),
    fieldFlag(route, 'context'),
  ];
}
