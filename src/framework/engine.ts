/** The contract between the core and a secrets engine (transit, kv, sys, token auth). */
import type { EngineEnv, EngineLifecycle } from './context.js';
import type { AnyRoute } from './route.js';

/** A mountable engine: a static route table (read by router, CLI, docs) and a factory for instances. */
export interface EngineModule<E extends EngineLifecycle = EngineLifecycle> {
  /** Mount type as in sys/mounts ("transit", "kv", "system", "token"). */
  type: string;
  /** Accessor prefix ("transit" -> transit_1a2b3c4d). */
  accessorPrefix: string;
  description: string;
  routes: readonly AnyRoute[];
  /** Create the live instance for one mount. */
  create(env: EngineEnv): Promise<E>;
}
