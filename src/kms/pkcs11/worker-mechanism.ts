/**
 * Mechanism parameters (worker-protocol.ts's MechParams) as the pkcs11js parameter objects the
 * worker hands to C_SignInit / C_EncryptInit / C_DecryptInit for RSA and EC work. Worker thread only.
 */
import type { MechParams } from './worker-protocol.js';

/** The pkcs11js mechanism object of `mechanism` with `params`. */
export function mechanismOf(mechanism: number, params: MechParams): unknown {
  switch (params.type) {
    case 'none':
      return { mechanism };
    case 'pss':
      return {
        mechanism,
        parameter: {
          type: 5 /* CK_PARAMS_RSA_PSS */,
          hashAlg: params.hashAlg,
          mgf: params.mgf,
          saltLen: params.saltLen,
        },
      };
    case 'oaep':
      // CKZ_DATA_SPECIFIED = 1, no label (reference 5.3: `source` is required).
      return {
        mechanism,
        parameter: { type: 4 /* CK_PARAMS_RSA_OAEP */, hashAlg: params.hashAlg, mgf: params.mgf, source: 1 },
      };
    case 'gcm':
      // CK_PARAMS_GCM (v2.40 struct with ulIvBits set): the legacy form leaves ulIvBits uninitialised (reference 5.3).
      return {
        mechanism,
        parameter: {
          type: 25,
          iv: Buffer.from(params.iv),
          ivBits: params.iv.length * 8,
          aad: params.aad ? Buffer.from(params.aad) : undefined,
          tagBits: params.tagBits,
        },
      };
  }
}
