/** What templates' functions are, and the error a function raises about a value (exec.ts and builtins.ts share them). */

/** A function callable from a template. */
export type TemplateFunc = (...args: unknown[]) => unknown;

/** An error whose message holds a value; `redacted` says the same without it. */
export class ValueError extends Error {
  constructor(
    message: string,
    readonly redacted: string,
  ) {
    super(message);
  }
}
