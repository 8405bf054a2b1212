/**
 * The sys module as the daemon mounts it: the server gives it the OpenAPI generator of src/docs, which
 * reads every engine's route table (engines never import the docs).
 */
import { openApiOfMounts } from '../docs/catalog.js';
import { sysModule } from '../engines/sys/index.js';

/** The system module mounted at `sys/` (its instance is the core). */
export const sysEngine = sysModule({ openApi: openApiOfMounts });
