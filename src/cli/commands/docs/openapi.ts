/** `keyhold openapi [--offline]`: the OpenAPI 3 document of the mounted routes. */
import { flag, type CommandSpec } from '../../command.js';

export const openapi: CommandSpec = {
  words: ['openapi'],
  summary: 'Print the OpenAPI 3 document of the mounted routes (sys/internal/specs/openapi)',
  flags: [
    flag('--offline', 'build it from the route tables with the dev mounts (transit/, secret/), without a daemon'),
    flag('--generic-mount-paths', 'replace mount paths with {<mount>_mount_path} parameters'),
  ],
  async run(inv) {
    const o = inv.opts as { offline?: boolean; genericMountPaths?: boolean };
    let doc: unknown;
    if (o.offline) {
      const [{ DEV_MOUNTS, mountedRoutes }, { buildOpenApi }, { VERSION }] = await Promise.all([
        import('../../../docs/catalog.js'),
        import('../../../docs/openapi.js'),
        import('../../../version.js'),
      ]);
      doc = buildOpenApi(mountedRoutes(DEV_MOUNTS), { version: VERSION, genericMountPaths: o.genericMountPaths });
    } else {
      const res = await inv.client.read(
        'sys/internal/specs/openapi',
        o.genericMountPaths ? { generic_mount_paths: 'true' } : undefined,
      );
      doc = res.body;
    }
    if (inv.globals.field || inv.globals.format === 'yaml') await inv.print(doc);
    else inv.io.stdout.write(JSON.stringify(doc, null, 2) + '\n');
  },
};
