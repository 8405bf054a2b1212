/**
 * Soft deletion of transit keys (OpenBao's `keys/:name/soft-delete` and `soft-delete-restore`): a
 * soft-deleted key keeps its material and may be read, backed up, restored or deleted, and refuses
 * every other operation until it is restored.
 */
import { invalid } from '../../../framework/errors.js';
import type { TransitKey } from './types.js';

/** 400 when the key is soft-deleted (every operation but read, backup, soft-delete-restore and delete). */
export function refuseSoftDeleted(key: Pick<TransitKey, 'name' | 'softDeleted'>): void {
  if (key.softDeleted)
    throw invalid(
      'name',
      `key "${key.name}" is soft-deleted; restore it with keys/${key.name}/soft-delete-restore first`,
    );
}
