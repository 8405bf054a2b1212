/** KV v2 route table (filled in below). */
import type { AnyRoute } from '../../framework/route.js';

/** Every KV v2 endpoint, relative to the mount. */
export const kvRoutes: readonly AnyRoute[] = [];
