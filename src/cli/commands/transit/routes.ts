/** The transit routes the CLI derives flags from, by path. */
import { dataRoutes } from '../../../engines/transit/routes/data-routes.js';
import { jwtRoutes } from '../../../engines/transit/routes/jwt-routes.js';
import { routeAt } from '../../route-flags.js';

export const ENCRYPT = routeAt(dataRoutes, 'encrypt/:name');
export const DECRYPT = routeAt(dataRoutes, 'decrypt/:name');
export const REWRAP = routeAt(dataRoutes, 'rewrap/:name');
export const DATAKEY = routeAt(dataRoutes, 'datakey/:plaintext/:name');
export const RANDOM = routeAt(dataRoutes, 'random(/:urlsource)(/:urlbytes)');
export const HMAC = routeAt(dataRoutes, 'hmac/:name(/:urlalgorithm)');
export const SIGN = routeAt(dataRoutes, 'sign/:name(/:urlalgorithm)');
export const VERIFY = routeAt(dataRoutes, 'verify/:name(/:urlalgorithm)');
export const JWT_VERIFY = routeAt(jwtRoutes, 'jwt/verify/:name');
