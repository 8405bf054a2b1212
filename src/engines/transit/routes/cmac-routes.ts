/** The CMAC route of the transit engine, on Vault Enterprise's API: `cmac/:name(/:url_mac_length)`. */
import { f } from '../../../framework/fields.js';
import { invalid, internal } from '../../../framework/errors.js';
import { routesFor, type AnyRoute } from '../../../framework/route.js';
import type { TransitState } from '../keyring/types.js';
import { readBatchItems } from '../ops/batch-items.js';
import { CMAC_ITEM, runCmac } from '../ops/cmac-operations.js';

const route = routesFor<TransitState>();

/** Routes: cmac. */
export const cmacRoutes: AnyRoute[] = [
  route({
    path: 'cmac/:name(/:url_mac_length)',
    standby: 'serve',
    summary: 'AES-CMAC (SP 800-38B) of base64 input with an aes128/192/256-cmac key',
    fields: {
      name: f.name('Name of the key'),
      url_mac_length: f.string('MAC length in bytes in the URL (wins over mac_length)'),
      mac_length: f.int('MAC length in bytes, 1-16 (0 = 16)').default(0),
      input: f.string('Data to authenticate (base64)').sensitive(),
      key_version: f.int('Key version; 0 means latest').default(0),
      reference: f.string('Echoed in the matching batch_results item'),
      batch_input: f.list('Items to process in one request; results keep the input order'),
    },
    operations: {
      update: async ({ engine, data }) => {
        let urlLength: number | undefined;
        if (data.url_mac_length) {
          if (!/^\d{1,3}$/.test(data.url_mac_length))
            throw invalid(
              'url_mac_length',
              `invalid url_mac_length ${JSON.stringify(data.url_mac_length.slice(0, 16))}: must be an integer`,
            );
          urlLength = Number(data.url_mac_length);
        }
        const batch = data.batch_input !== undefined;
        const raw = batch ? (data.batch_input as unknown[]) : [{ input: data.input, reference: data.reference }];
        const list = readBatchItems(raw, CMAC_ITEM);
        const out = await runCmac(engine, data.name, list, {
          keyVersion: data.key_version,
          macLength: data.mac_length,
          urlLength,
          batch,
        });
        if (batch) return { data: { batch_results: out.results } };
        const e = out.errors[0];
        if (e) throw e.user ? invalid(e.message) : internal(e.message);
        return { data: { cmac: out.results[0]!.cmac } };
      },
    },
  }),
];
