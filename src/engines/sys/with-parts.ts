/**
 * The sys/ and auth/token/ engines have no state of their own: their instance is a bag of the
 * core's parts (sys-parts.ts). Their modules are exported as route tables (docs, OpenAPI, the sealed
 * sys mount); the core mounts them through `withParts`, which hands the bag over. (The identity
 * engine has state of its own and is built for the core's identity store: `identityEngineFor`.)
 */
import type { EngineLifecycle } from '../../framework/context.js';
import type { EngineModule } from '../../framework/engine.js';

/** A module whose instance is a bag of parts `P` (no lifecycle of its own). */
export type PartsModule<P> = EngineModule<P & EngineLifecycle>;

/** `create` of a module whose instance is the core's parts: mounting it without them is a programming error. */
export function partsRequired(type: string): () => Promise<never> {
  return async () => {
    throw new Error(`the ${type} engine is mounted by the core with its parts (withParts)`);
  };
}

/** The same module, creating `parts` as its instance (the route table stays the module's, read live). */
export function withParts<P>(module: PartsModule<P>, parts: P & EngineLifecycle): PartsModule<P> {
  return {
    type: module.type,
    accessorPrefix: module.accessorPrefix,
    description: module.description,
    get routes() {
      return module.routes;
    },
    create: async () => parts,
  };
}
