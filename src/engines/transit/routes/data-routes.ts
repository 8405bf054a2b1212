/** Data-operation routes of the transit engine (issue 4). */
import type { AnyRoute } from '../../../framework/route.js';

/** Routes: encrypt, decrypt, rewrap, datakey, random, hash, hmac, sign, verify. */
export const dataRoutes: AnyRoute[] = [];
