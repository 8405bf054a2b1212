/**
 * Routes of issue 32 (Vault Enterprise's and OpenBao's transit additions), gathered here so the
 * module's route list takes one hook: CMAC, soft delete, batch and derived data keys, ECDH derive-key.
 */
import type { AnyRoute } from '../../../framework/route.js';
import { cmacRoutes } from './cmac-routes.js';
import { softDeleteRoutes } from './soft-delete-routes.js';
import { datakeysRoutes } from './datakeys-routes.js';
import { deriveKeyRoutes } from './derive-key-routes.js';

/** Every route added for issue 32. */
export const transitExtraRoutes: AnyRoute[] = [
  ...cmacRoutes,
  ...softDeleteRoutes,
  ...datakeysRoutes,
  ...deriveKeyRoutes,
];
