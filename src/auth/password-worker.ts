/**
 * The bcrypt worker thread (started by password-hash.ts): bcrypt at Vault's cost takes tens to
 * hundreds of milliseconds of CPU, which must not stall the daemon's event loop (design note,
 * section 4). Messages carry one password each; nothing is logged or kept.
 */
import { parentPort } from 'node:worker_threads';
import bcrypt from 'bcryptjs';

/** A request from the main thread. */
interface Job {
  id: number;
  op: 'hash' | 'compare';
  password: string;
  hash?: string;
  cost?: number;
}

parentPort?.on('message', (job: Job) => {
  try {
    const result =
      job.op === 'hash' ? bcrypt.hashSync(job.password, job.cost) : bcrypt.compareSync(job.password, job.hash ?? '');
    parentPort!.postMessage({ id: job.id, result });
  } catch (e) {
    parentPort!.postMessage({ id: job.id, error: (e as Error).message });
  }
});
