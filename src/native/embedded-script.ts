/** Scripts embedded in the single executable (worker threads cannot start from a file inside it). */
import { createRequire } from 'node:module';

type Sea = { isSea(): boolean; getAsset(key: string, encoding: string): string };

/** The text of embedded script `name` inside the single executable; null when running from dist/. */
export function embeddedScript(name: string): string | null {
  let sea: Sea;
  try {
    sea = createRequire(import.meta.url)('node:sea') as Sea;
    if (!sea.isSea()) return null;
  } catch {
    return null;
  }
  return sea.getAsset(name, 'utf8');
}
