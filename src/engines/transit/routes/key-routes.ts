/** Key-management routes of the transit engine (issue 3). */
import type { AnyRoute } from '../../../framework/route.js';

/** Routes: keys CRUD, config, rotate, trim, export, backup/restore, import, wrapping key, csr. */
export const keyRoutes: AnyRoute[] = [];
