/** Entry of the embedded bcrypt worker script (src/auth/password-worker.ts, bundled by scripts/package.mjs). */
import '../../dist/auth/password-worker.js';
