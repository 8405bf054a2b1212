/** keyhold's version (reported in sys/seal-status and `keyhold version`). */
export const VERSION = '0.1.0';
