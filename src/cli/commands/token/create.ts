/** `keyhold token create`: a new token; the flags that name a field of auth/token/create come from the route. */
import { collect, flag, type CommandSpec } from '../../command.js';
import { fieldFlag, givenOf, routeAt } from '../../route-flags.js';
import { tokenRoutes } from '../../../engines/sys/token-routes.js';

const CREATE = routeAt(tokenRoutes, 'create');
const lifetime = [
  fieldFlag(CREATE, 'ttl'),
  fieldFlag(CREATE, 'explicit_max_ttl'),
  fieldFlag(CREATE, 'num_uses'),
  fieldFlag(CREATE, 'display_name', { value: 'name' }),
];
const kind = [fieldFlag(CREATE, 'period'), fieldFlag(CREATE, 'type', { value: 'type' })];

export const create: CommandSpec = {
  words: ['token', 'create'],
  summary: 'Create a token',
  flags: [
    flag('--policy <name>', 'policy (repeatable)', { parse: collect }),
    flag('--policies <list>', 'comma-separated policies'),
    ...lifetime,
    flag('--orphan', 'create an orphan token'),
    flag('--role <name>', 'create against a token role (auth/token/create/<name>)'),
    ...kind,
    flag('--no-default-policy', 'do not attach the default policy'),
    flag('--renewable <bool>', 'whether it can be renewed'),
  ],
  examples: [
    'keyhold token create --policy transit-user --ttl 1h',
    'keyhold token create --policy ci --field token',
    'keyhold token create -role=deployer -period=24h -orphan',
  ],
  async run(inv) {
    const o = inv.opts;
    const policies = [...(o.policy ?? []), ...(o.policies ? String(o.policies).split(',') : [])];
    const body: Record<string, unknown> = {};
    if (policies.length) body.policies = policies;
    Object.assign(body, givenOf(lifetime, o));
    if (o.orphan) body.no_parent = true;
    if (o.defaultPolicy === false) body.no_default_policy = true;
    if (o.renewable !== undefined) body.renewable = o.renewable;
    Object.assign(body, givenOf(kind, o));
    const res = await inv.client.write(
      o.role ? `auth/token/create/${encodeURIComponent(o.role)}` : 'auth/token/create',
      body,
    );
    const a = (res.body?.auth ?? {}) as Record<string, unknown>;
    await inv.printSecret(res.body, {
      token: a.client_token,
      token_accessor: a.accessor,
      token_duration: a.lease_duration,
      token_renewable: a.renewable,
      token_policies: a.policies,
    });
  },
};
