/** The CLI's two error kinds: from the server (exit 2) and local or usage (exit 1). */

/** Error from the server (exit status 2). */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
    readonly body: Record<string, unknown> | null,
    /** The request, e.g. "GET sys/mounts" (shown after the message). */
    readonly where?: string,
  ) {
    super(
      errors.length
        ? errors.join('; ')
        : status === 404 && where
          ? `No value found at ${where.replace(/^\S+ /, '')}`
          : `server answered ${status}`,
    );
  }
}

/** Error before reaching the server or of usage (exit status 1). */
export class LocalError extends Error {}

/** A response body as JSON; a body that is not JSON becomes `{errors: [its first 200 characters]}`; empty is null. */
export function parseAnswer(text: string): Record<string, unknown> | null {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return { errors: [text.trim().slice(0, 200)] };
  }
}
