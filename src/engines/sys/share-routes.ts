/** The sys routes of issue 28 ("share a server safely"), in one list the sys module registers. */
import type { AnyRoute } from '../../framework/route.js';
import { quotaRoutes, type QuotaParts } from './quota-routes.js';
import { remountRoutes, type RemountParts } from './remount.js';
import { auditHeaderRoutes } from './audit-header-routes.js';
import { corsRoutes, type CorsParts } from './cors-routes.js';
import { loggersRoutes, type LogParts } from './loggers-routes.js';
import { operatorInfoRoutes, type OperatorInfoParts } from './operator-info-routes.js';

/** Quotas, remount, and the operator routes of issue 28. */
export const shareRoutes: AnyRoute[] = [
  ...quotaRoutes,
  ...remountRoutes,
  ...auditHeaderRoutes,
  ...corsRoutes,
  ...loggersRoutes,
  ...operatorInfoRoutes,
];

/** What the core gives these routes (part of the sys engine's parts bag). */
export type ShareParts = QuotaParts & RemountParts & CorsParts & LogParts & OperatorInfoParts;
