/** Entry of the embedded PKCS#11 worker script (src/kms/pkcs11/pkcs11-worker.ts, bundled by scripts/package.mjs). */
import '../../dist/kms/pkcs11/pkcs11-worker.js';
