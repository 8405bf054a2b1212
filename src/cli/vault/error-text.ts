/**
 * How the vault face prints an error (vault's command/base.go and api/response.go): an API error as
 * `Error reading PATH: Error making API request.` with the URL, the status code and the server's
 * errors as `* ...` lines; a 404 of a read or list as vault's bare `No value found at PATH`. Anything else
 * keeps keyhold's one line. Scripts grep these (`Code: 403`, `* permission denied`).
 */
import { errorLine } from '../error-line.js';
import { ServerError } from '../errors.js';

const VERB: Record<string, string> = {
  GET: 'Error reading',
  LIST: 'Error listing',
  DELETE: 'Error deleting',
  POST: 'Error writing data to',
  PUT: 'Error writing data to',
  PATCH: 'Error writing data to',
};

/** The text vault would print on stderr for `e`; `address` is the server's (VAULT_ADDR). */
export function vaultErrorText(e: unknown, address: string): string {
  if (!(e instanceof ServerError)) return errorLine(e);
  // kv get/list name the secret themselves.
  if (e.status === 404 && e.message.startsWith('No value found at ')) return e.message;
  if (!e.where) return errorLine(e);
  const space = e.where.indexOf(' ');
  const method = space > 0 ? e.where.slice(0, space) : 'GET';
  const path = space > 0 ? e.where.slice(space + 1) : e.where;
  // vault's api package reads any 404 of a read or list as "nothing there", whatever the errors say.
  if (e.status === 404 && (method === 'GET' || method === 'LIST')) return `No value found at ${path}`;
  const url =
    method === 'LIST'
      ? `GET ${address.replace(/\/+$/, '')}/v1/${path}?list=true`
      : `${method} ${address.replace(/\/+$/, '')}/v1/${path}`;
  const errors = e.errors.length ? e.errors : [`server answered ${e.status}`];
  return [
    `${VERB[method] ?? 'Error making request to'} ${path}: Error making API request.`,
    '',
    `URL: ${url}`,
    `Code: ${e.status}. Errors:`,
    '',
    ...errors.map((m) => `* ${m}`),
  ].join('\n');
}
