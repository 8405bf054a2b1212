/** The sys routes of issue 28 ("share a server safely"), in one list the sys module registers. */
import type { AnyRoute } from '../../framework/route.js';
import { quotaRoutes } from './quota-routes.js';
import { remountRoutes } from './remount.js';
import { auditHeaderRoutes } from './audit-header-routes.js';
import { corsRoutes } from './cors-routes.js';
import { loggersRoutes } from './loggers-routes.js';
import { operatorInfoRoutes } from './operator-info-routes.js';

/** Quotas, remount, and the operator routes of issue 28. */
export const shareRoutes: AnyRoute[] = [...quotaRoutes, ...remountRoutes, ...auditHeaderRoutes, ...corsRoutes, ...loggersRoutes, ...operatorInfoRoutes];
