/** The destination types table: neutral type id -> fields, rules and connector. */
import type { DestinationType } from '../types.js';
import type { DestinationTypeDef } from './common.js';
import { providerASm } from './provider-a-sm.js';
import { providerBKv } from './provider-b-kv.js';
import { providerCSm } from './provider-c-sm.js';
import { repohost } from './repohost.js';
import { hostingProject } from './hosting-project.js';
import { gitlab } from './gitlab.js';

/** Every destination type by id. */
export const DESTINATION_TYPES: Record<DestinationType, DestinationTypeDef> = {
  'provider-a-sm': providerASm,
  'provider-b-kv': providerBKv,
  'provider-c-sm': providerCSm,
  repohost,
  'hosting-project': hostingProject,
  gitlab,
};
