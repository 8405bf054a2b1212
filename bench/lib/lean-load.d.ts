/** Types of lean-load.js (for the unit tests). */
export function encodeRequest(opts: {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}): Buffer;
export function parseResponse(
  buf: Buffer,
): { status: number; end: number; close: boolean } | { status: number; need: number } | null;
export function runLean(opts: {
  target: { socketPath: string } | { host: string; port: number };
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  connections: number;
  durationSec: number;
  timeoutSec?: number;
  onResponse(status: number, ms: number): void;
}): Promise<{ durationSec: number; errors: number; timeouts: number }>;
