/**
 * sys/generate-root/attempt (GET status, PUT start, DELETE cancel) and sys/generate-root/update, as
 * Vault serves them (http/sys_generate_root.go): no token needed, bare JSON answers, the node must be
 * unsealed. The attempt itself is seal/generate-root.ts, held by the seal manager in memory only.
 */
import { invalid } from '../../framework/errors.js';
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import type { SysParts } from './sys-parts.js';

const route = routesFor<SysParts>();

function rawJson(body: unknown, status = 200) {
  return { raw: { contentType: 'application/json', body: JSON.stringify(body) + '\n', status } };
}

const generationOf = (engine: SysParts) => engine.seal.sealer.rootGeneration;

/** Vault's generated root token: an orphan with the root policy, display name "root". */
const issueRoot = (engine: SysParts) => async () =>
  (await engine.tokens.create({ policies: ['root'], display_name: 'root', orphan: true })).id;

/** Root token generation routes. */
export const generateRootRoutes: AnyRoute[] = [
  route({
    path: 'generate-root/attempt',
    standby: 'active', // state only the active node holds
    summary: 'Start, read or cancel a root token generation',
    description:
      'Start with an otp (28 base62 characters), a pgp_key (base64 of a binary OpenPGP public key), or neither: the server then makes the OTP and returns it once. Unseal key holders (recovery key holders under an auto seal) then give their shares to generate-root/update.',
    fields: {
      otp: f
        .string('One-time pad the new token is XORed with (28 base62 characters); made by the server when absent')
        .sensitive(),
      pgp_key: f.string('Encrypt the new token to this OpenPGP public key (base64 of `gpg --export KEYID`)'),
    },
    unauthenticated: true,
    operations: {
      read: ({ engine }) => rawJson(generationOf(engine).status()),
      update: async ({ engine, data }) =>
        rawJson(await generationOf(engine).init({ otp: data.otp, pgp_key: data.pgp_key })),
      delete: ({ engine }) => {
        generationOf(engine).cancel();
      },
    },
  }),
  route({
    path: 'generate-root/update',
    standby: 'active', // state only the active node holds
    summary: 'Give one unseal (or recovery) key share to the root token generation in progress',
    fields: {
      key: f.string('An unseal (or recovery) key share, hex or base64').sensitive(),
      nonce: f.string('Nonce of the attempt in progress'),
    },
    unauthenticated: true,
    operations: {
      update: async ({ engine, data }) => {
        if (!data.key) throw invalid("'key' must be specified in request body as JSON");
        return rawJson(await generationOf(engine).update(data.key, data.nonce ?? '', issueRoot(engine)));
      },
    },
  }),
];
