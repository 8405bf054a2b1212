/** Error kinds thrown by domain code; only the HTTP responder and CLI exit mapper turn them into statuses. */
export type ErrorKind =
  | 'invalid' // 400: bad input
  | 'denied' // 403: no token, bad token, ACL deny
  | 'notFound' // 404: unknown path or missing resource
  | 'unsupported' // 405: operation not supported on path
  | 'conflict' // 409 by default; engines may override status (Vault often uses 400)
  | 'tooLarge' // 413
  | 'precondition' // 412
  | 'internal' // 500
  | 'sealed' // 503
  | 'unavailable'; // 503

const statusOf: Record<ErrorKind, number> = {
  invalid: 400,
  denied: 403,
  notFound: 404,
  unsupported: 405,
  conflict: 409,
  tooLarge: 413,
  precondition: 412,
  internal: 500,
  sealed: 503,
  unavailable: 503,
};

/** A typed error: kind -> HTTP status; messages never hold secrets. */
export class KeyholdError extends Error {
  readonly kind: ErrorKind;
  readonly status: number;
  /** Optional response `data` to send with the error (KV 404 with metadata, batch results). */
  readonly data?: unknown;
  /** Extra error strings (Vault sends `errors` as an array). */
  readonly errors?: string[];
  constructor(kind: ErrorKind, message: string, opts: { status?: number; data?: unknown; errors?: string[] } = {}) {
    // An answer to the client, not a fault to debug: skip the stack trace, which costs more than the
    // rest of a refused request (a flood of 403s should stay cheap). 500s keep theirs.
    const limit = Error.stackTraceLimit;
    if (kind !== 'internal') Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.name = 'KeyholdError';
    this.kind = kind;
    this.status = opts.status ?? statusOf[kind];
    this.data = opts.data;
    this.errors = opts.errors;
  }
}

/** 400 naming the field and the broken rule: `nonce: must be exactly 12 bytes, got 8`. */
export function invalid(fieldOrMessage: string, rule?: string): KeyholdError {
  return new KeyholdError('invalid', rule === undefined ? fieldOrMessage : `${fieldOrMessage}: ${rule}`);
}
/** 404 for a missing resource (empty message renders `{"errors":[]}` as Vault does). */
export function notFound(message = ''): KeyholdError {
  return new KeyholdError('notFound', message);
}
/** 403 permission denied. */
export function denied(message = 'permission denied'): KeyholdError {
  return new KeyholdError('denied', message);
}
/** 405 unsupported operation. */
export function unsupported(message = 'unsupported operation'): KeyholdError {
  return new KeyholdError('unsupported', message);
}
/** Conflict (status defaults to 409; Vault-compatible callers pass 400 or 500). */
export function conflict(message: string, status?: number): KeyholdError {
  return new KeyholdError('conflict', message, { status });
}
/** 500: a failure that is not the client's fault. */
export function internal(message: string): KeyholdError {
  return new KeyholdError('internal', message);
}
/** 503 while sealed. */
export function sealed(): KeyholdError {
  return new KeyholdError('sealed', 'Vault is sealed');
}
/** 503 for a temporarily unavailable dependency (storage full, audit device down). */
export function unavailable(message: string): KeyholdError {
  return new KeyholdError('unavailable', message);
}
/** True when `e` is a KeyholdError. */
export function isKeyholdError(e: unknown): e is KeyholdError {
  return e instanceof KeyholdError;
}

/**
 * A template that does not parse or resolve: an identity template in an ACL path (auth/templates.ts;
 * the rule is then skipped) or a secret name template (sync/templates.ts; the message names the
 * problem). Plain data for the caller to judge, not a response kind.
 */
export class TemplateError extends Error {}
