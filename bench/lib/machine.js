/** What the benchmark ran on: CPU, cores, memory, Node, kernel, load at the start. */
import { arch, availableParallelism, cpus, loadavg, release, totalmem, type } from 'node:os';

/** The `machine` object of bench/results/latest.json. */
export function machineInfo() {
  const c = cpus();
  return {
    cpu: c[0]?.model?.trim() ?? 'unknown',
    cores: availableParallelism(),
    mem_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${type()} ${release()} ${arch()}`,
    loadavg_at_start: loadavg().map((v) => Math.round(v * 100) / 100),
    date: new Date().toISOString(),
  };
}
