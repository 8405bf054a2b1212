/** Import/export routes of the transit engine (filled in below). */
import type { AnyRoute } from '../../../framework/route.js';

/** Routes: export, backup/restore, wrapping key, import, import_version, byok-export, csr, set-certificate. */
export const keyIoRoutes: AnyRoute[] = [];
