/** The shape every doc generator reads: a mount and its route table (built by catalog.ts). */
import type { AnyRoute } from '../framework/route.js';

/** A mount with the routes it serves. */
export interface MountedRoutes {
  /** Mount path with trailing slash ("transit/"). */
  path: string;
  type: string;
  description: string;
  routes: readonly AnyRoute[];
  /** Internal mounts always exist and cannot be unmounted. */
  internal: boolean;
}
