/** `sys/host-info`, `sys/in-flight-req` and `sys/version-history`, answered as Vault answers them. */
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { hostInfo } from './host-info.js';

/** What these routes need of the core. */
export interface OperatorInfoParts {
  readonly clock: { now(): number };
  /** Requests in progress on this node: request id -> what Vault shows of each. */
  inFlightRequests(): Record<string, Record<string, string>>;
  /** Versions the storage has run under, oldest first. */
  versionHistory(): Promise<{ keys: string[]; key_info: Record<string, unknown> }>;
}

const route = routesFor<OperatorInfoParts>();

/** The operator information routes. */
export const operatorInfoRoutes: AnyRoute[] = [
  route({
    path: 'host-info',
    summary: 'CPU, memory, disk and host of this node',
    fields: {},
    sudo: true,
    operations: { read: ({ engine }) => ({ data: hostInfo(engine.clock.now()) }) },
  }),
  route({
    path: 'in-flight-req',
    summary: 'Requests this node is serving now (Vault answers the map without an envelope)',
    fields: {},
    sudo: true,
    standby: 'local',
    operations: {
      read: ({ engine }) => ({
        raw: { contentType: 'application/json', body: JSON.stringify(engine.inFlightRequests()) + '\n' },
      }),
    },
  }),
  route({
    path: 'version-history',
    summary: 'Versions of keyhold this storage has run under, with when each was first seen',
    fields: {},
    operations: { list: async ({ engine }) => ({ data: await engine.versionHistory() }) },
  }),
];
