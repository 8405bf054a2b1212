/** The full CLI and daemon inside the single executable (embedded script keyhold-full.cjs, see entry.cjs). */
export { main } from '../../dist/main.js';
