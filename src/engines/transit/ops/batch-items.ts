/**
 * Reading `batch_input` items: each item is an object whose string fields stay undecoded until the
 * item is processed (so a bad base64 value fails that item only, as in Vault), while a field of the
 * wrong JSON type fails the whole request with a 400 naming `batch_input[i].field`. Items are
 * validated in place (no copies: a 10,000-item batch should cost little more than its JSON).
 */
import { invalid } from '../../../framework/errors.js';

/** Kinds of item fields. */
export type ItemFieldKind = 'string' | 'int' | 'bool';

/** One item: its index and its (validated, normalised) fields. */
export interface BatchItem {
  index: number;
  fields: Record<string, unknown>;
}

function normalise(fields: Record<string, unknown>, name: string, kind: ItemFieldKind, index: number): void {
  const where = () => `batch_input[${index}].${name}`;
  const value = fields[name];
  if (value === undefined || value === null) return;
  if (kind === 'string') {
    if (typeof value === 'string') return;
    if (typeof value === 'number' || typeof value === 'boolean') fields[name] = String(value);
    else throw invalid(where(), 'expected a string');
  } else if (kind === 'int') {
    if (typeof value === 'number' && Number.isInteger(value)) return;
    if (typeof value === 'string' && /^[+-]?\d{1,15}$/.test(value.trim())) fields[name] = Number(value.trim());
    else if (typeof value === 'string' && value.trim() === '') fields[name] = 0;
    else throw invalid(where(), 'expected an integer');
  } else {
    if (typeof value === 'boolean') return;
    if (value === 'true' || value === '1' || value === 1) fields[name] = true;
    else if (value === 'false' || value === '0' || value === '' || value === 0) fields[name] = false;
    else throw invalid(where(), 'expected a boolean');
  }
}

/** Validate `batch_input` against a field-kind table; unknown item fields are ignored, as Vault does. */
export function readBatchItems(list: unknown[], kinds: Readonly<Record<string, ItemFieldKind>>): BatchItem[] {
  if (list.length === 0) throw invalid('missing batch input to process');
  const names = Object.keys(kinds);
  const out: BatchItem[] = new Array(list.length);
  for (let index = 0; index < list.length; index++) {
    const raw = list[index];
    if (!raw || typeof raw !== 'object' || Array.isArray(raw))
      throw invalid(`batch_input[${index}]: expected an object`);
    const fields = raw as Record<string, unknown>;
    for (const name of names) if (fields[name] !== undefined) normalise(fields, name, kinds[name]!, index);
    out[index] = { index, fields };
  }
  return out;
}

/** Whether the item carries the field (null counts as absent). */
export function has(item: BatchItem, name: string): boolean {
  const v = item.fields[name];
  return v !== undefined && v !== null;
}

/** A string field, or undefined. */
export function str(item: BatchItem, name: string): string | undefined {
  const v = item.fields[name];
  return typeof v === 'string' ? v : undefined;
}

/** An integer field, or undefined. */
export function int(item: BatchItem, name: string): number | undefined {
  const v = item.fields[name];
  return typeof v === 'number' ? v : undefined;
}

/** A boolean field, or undefined. */
export function bool(item: BatchItem, name: string): boolean | undefined {
  const v = item.fields[name];
  return typeof v === 'boolean' ? v : undefined;
}

const B64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decode an optional base64 string field (empty/absent -> undefined); 400 naming the field. Standard or URL-safe alphabet. */
export function itemBase64(item: BatchItem, name: string): Buffer | undefined {
  let s = str(item, name);
  if (s === undefined || s === '') return undefined;
  if (s.indexOf('\n') !== -1 || s.indexOf('\r') !== -1) s = s.replace(/[\r\n]/g, '');
  if (!B64.test(s) || s.replace(/=+$/, '').length % 4 === 1) throw invalid(name, 'must be valid base64');
  return Buffer.from(s, s.indexOf('-') !== -1 || s.indexOf('_') !== -1 ? 'base64url' : 'base64');
}
