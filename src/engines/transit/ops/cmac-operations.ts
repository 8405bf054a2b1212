/** cmac/:name and verify's CMAC branch over a mount's key store (Vault Enterprise's shapes). */
import { invalid } from '../../../framework/errors.js';
import type { TransitState } from '../keyring/types.js';
import { has, int, str, type BatchItem } from './batch-items.js';
import { checkCmacKey, cmacWithKey, verifyCmacWithKey } from './cmac.js';
import { type BatchOutcome, decodeInput, eachItem, ref, withKey } from './operations.js';

/** Item fields of cmac. */
export const CMAC_ITEM = { input: 'string', mac_length: 'int', key_version: 'int', reference: 'string' } as const;

const NOT_FOUND = 'encryption key not found';

/** cmac/:name: `urlLength` (from the URL) wins over every item's `mac_length`. */
export async function runCmac(
  state: TransitState,
  name: string,
  items: BatchItem[],
  o: { keyVersion: number; macLength: number; urlLength?: number; batch: boolean },
): Promise<BatchOutcome> {
  return withKey(state, name, NOT_FOUND, async (key) => {
    checkCmacKey(key);
    if (!o.batch && !has(items[0]!, 'input')) throw invalid('missing input for CMAC');
    return eachItem(
      items,
      (item) => {
        if (!has(item, 'input')) throw invalid('missing input for CMAC');
        const len = o.urlLength || int(item, 'mac_length') || o.macLength;
        return {
          cmac: cmacWithKey(key, decodeInput(item), len, int(item, 'key_version') || o.keyVersion),
          reference: ref(item),
        };
      },
      (item, e) => ({ error: e.message, reference: ref(item) }),
    );
  });
}

/** verify/:name, CMAC branch (`valid` false is reported, unlike the HMAC branch's omission). */
export async function runVerifyCmac(
  state: TransitState,
  name: string,
  items: BatchItem[],
  macLength: number,
): Promise<BatchOutcome> {
  return withKey(state, name, NOT_FOUND, async (key) => {
    checkCmacKey(key);
    return eachItem(
      items,
      (item) => {
        if (!has(item, 'input')) throw invalid('missing input');
        const valid = verifyCmacWithKey(
          key,
          decodeInput(item),
          str(item, 'cmac') ?? '',
          int(item, 'mac_length') || macLength,
        );
        return { valid, reference: ref(item) };
      },
      (item, e) => ({ valid: false, error: e.message, reference: ref(item) }),
    );
  });
}
