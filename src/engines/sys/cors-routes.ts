/** `sys/config/cors` (Vault's handleCORSRead/Update/Delete): read, enable with origins and headers, disable. Root-protected as in Vault. */
import { f } from '../../framework/fields.js';
import { routesFor, type AnyRoute } from '../../framework/route.js';
import { settingsReply, stringList } from './tune-fields.js';

/** sys/config/cors as stored and read. */
export interface CorsConfig {
  enabled: boolean;
  allowed_origins: string[];
  allowed_headers: string[];
}

/** What the CORS routes need of the core. */
export interface CorsParts {
  readonly cors: { view(): CorsConfig; set(c: CorsConfig): Promise<void> };
}

const route = routesFor<CorsParts>();

const FIELDS = {
  enabled: f.bool('Whether CORS is on'),
  allowed_origins: f.any('Origins allowed (scheme://host[:port]), or "*" alone'),
  allowed_headers: f.any('Headers browsers may send besides the standard ones'),
};

/** The CORS route. */
export const corsRoutes: AnyRoute[] = [
  route({
    path: 'config/cors',
    summary: 'Read, set or disable the CORS configuration',
    fields: FIELDS,
    sudo: true,
    operations: {
      read: ({ engine }) => ({ data: { ...engine.cors.view() } }),
      update: async ({ engine, data, raw }) => {
        const cur = engine.cors.view();
        await engine.cors.set({
          // Vault: a write with origins turns CORS on unless `enabled` says otherwise.
          enabled: data.enabled ?? (raw.allowed_origins !== undefined ? true : cur.enabled),
          allowed_origins:
            raw.allowed_origins === undefined
              ? cur.allowed_origins
              : stringList('allowed_origins', raw.allowed_origins),
          allowed_headers:
            raw.allowed_headers === undefined
              ? cur.allowed_headers
              : stringList('allowed_headers', raw.allowed_headers),
        });
        return settingsReply(raw, FIELDS);
      },
      delete: async ({ engine }) => {
        await engine.cors.set({ enabled: false, allowed_origins: [], allowed_headers: [] });
      },
    },
  }),
];
