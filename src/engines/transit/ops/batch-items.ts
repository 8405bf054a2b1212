/**
 * Reading `batch_input` items: each item is an object whose string fields stay undecoded until the
 * item is processed (so a bad base64 value fails that item only, as in Vault), while a field of the
 * wrong JSON type fails the whole request with a 400 naming `batch_input[i].field`.
 */
import { invalid } from '../../../framework/errors.js';
import { decodeBase64 } from '../../../framework/fields.js';

/** Kinds of item fields. */
export type ItemFieldKind = 'string' | 'int' | 'bool';

/** A raw item with typed accessors. */
export interface BatchItem {
  /** Index in batch_input. */
  index: number;
  /** String fields present in the item. */
  strings: Record<string, string>;
  /** Integer fields present in the item. */
  ints: Record<string, number>;
  /** Boolean fields present in the item. */
  bools: Record<string, boolean>;
  /** Names of fields present (any kind). */
  present: Set<string>;
}

/** Parse `batch_input` against a field-kind table; unknown item fields are ignored, as Vault does. */
export function readBatchItems(list: unknown[], kinds: Readonly<Record<string, ItemFieldKind>>): BatchItem[] {
  if (list.length === 0) throw invalid('missing batch input to process');
  return list.map((raw, index) => {
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw invalid(`batch_input[${index}]: expected an object`);
    const item: BatchItem = { index, strings: {}, ints: {}, bools: {}, present: new Set() };
    for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
      const kind = kinds[name];
      if (!kind || value === null || value === undefined) continue;
      item.present.add(name);
      const where = `batch_input[${index}].${name}`;
      if (kind === 'string') {
        if (typeof value === 'string') item.strings[name] = value;
        else if (typeof value === 'number' || typeof value === 'boolean') item.strings[name] = String(value);
        else throw invalid(where, 'expected a string');
      } else if (kind === 'int') {
        if (typeof value === 'number' && Number.isInteger(value)) item.ints[name] = value;
        else if (typeof value === 'string' && /^[+-]?\d{1,15}$/.test(value.trim())) item.ints[name] = Number(value.trim());
        else if (typeof value === 'string' && value.trim() === '') item.ints[name] = 0;
        else throw invalid(where, 'expected an integer');
      } else {
        if (typeof value === 'boolean') item.bools[name] = value;
        else if (value === 'true' || value === '1') item.bools[name] = true;
        else if (value === 'false' || value === '0' || value === '') item.bools[name] = false;
        else throw invalid(where, 'expected a boolean');
      }
    }
    return item;
  });
}

/** Decode an optional base64 string field of an item (empty/absent -> undefined); 400 naming the field. */
export function itemBase64(item: BatchItem, name: string): Buffer | undefined {
  const s = item.strings[name];
  if (s === undefined || s === '') return undefined;
  return decodeBase64(name, s);
}
