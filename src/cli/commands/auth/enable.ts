/** `keyhold auth enable TYPE`: enable an auth method. */
import { flag, type CommandSpec, type FlagSpec } from '../../command.js';

/** The tuning flags enable and tune share (tune adds "system" resets to the TTL help). */
export function tuneFlags(resets: boolean): FlagSpec[] {
  const reset = resets ? ' ("system" resets)' : '';
  return [
    flag('--default-lease-ttl <duration>', `default token TTL${reset}`),
    flag('--max-lease-ttl <duration>', `max token TTL${reset}`),
    flag('--token-type <type>', 'default-service or service'),
    flag('--listing-visibility <v>', 'unauth or hidden'),
  ];
}

/** The tuning fields given. */
export function tuneBody(o: Record<string, string | undefined>): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (o.defaultLeaseTtl) body.default_lease_ttl = o.defaultLeaseTtl;
  if (o.maxLeaseTtl) body.max_lease_ttl = o.maxLeaseTtl;
  if (o.tokenType) body.token_type = o.tokenType;
  if (o.listingVisibility) body.listing_visibility = o.listingVisibility;
  return body;
}

export const enable: CommandSpec = {
  words: ['auth', 'enable'],
  summary: 'Enable an auth method (approle, jwt, oidc, userpass, github, cert)',
  args: [{ name: 'type', help: 'method type' }],
  flags: [
    flag('--path <path>', 'mount path under auth/ (default: the type)'),
    flag('--description <text>', 'human description'),
    ...tuneFlags(false),
  ],
  examples: ['keyhold auth enable approle', 'keyhold auth enable -path=github jwt'],
  async run(inv) {
    const type = inv.args.type as string;
    const path = (inv.opts.path ?? type).replace(/^\/+|\/+$/g, '');
    await inv.client.write(`sys/auth/${path}`, {
      type,
      description: inv.opts.description ?? '',
      config: tuneBody(inv.opts),
    });
    inv.success(`Success! Enabled ${type} auth method at: ${path}/`);
  },
};
