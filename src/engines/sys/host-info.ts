/**
 * `sys/host-info` (Vault 1.6+, which reads it with gopsutil): CPU, CPU times, memory, the root
 * disk and the host, from node:os, statfs and /proc where the platform has them. Field names are
 * Vault's (gopsutil's JSON); what this platform cannot tell is left out rather than guessed.
 */
import { cpus, hostname, machine, release, totalmem, freemem, uptime } from 'node:os';
import { readFileSync, readdirSync, statfsSync } from 'node:fs';

function osRelease(): Record<string, string> {
  try {
    const out: Record<string, string> = {};
    for (const line of readFileSync('/etc/os-release', 'utf8').split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
      if (m) out[m[1]!] = m[2]!.replace(/^"|"$/g, '');
    }
    return out;
  } catch {
    return {};
  }
}

function memAvailable(): number {
  try {
    const m = /^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    /* not Linux */
  }
  return freemem();
}

function procCount(): number | undefined {
  try {
    return readdirSync('/proc').filter((n) => /^\d+$/.test(n)).length;
  } catch {
    return undefined;
  }
}

const pct = (part: number, whole: number) => (whole > 0 ? (part / whole) * 100 : 0);

/** Host information as Vault's sys/host-info answers it. */
export function hostInfo(now: number): Record<string, unknown> {
  const cs = cpus();
  const rel = osRelease();
  const total = totalmem();
  const available = memAvailable();
  const free = freemem();
  const disk: Array<Record<string, unknown>> = [];
  try {
    const s = statfsSync('/');
    const t = s.blocks * s.bsize;
    const fr = s.bavail * s.bsize;
    disk.push({
      path: '/',
      fstype: '',
      total: t,
      free: fr,
      used: t - s.bfree * s.bsize,
      usedPercent: pct(t - s.bfree * s.bsize, t),
      inodesTotal: s.files,
      inodesFree: s.ffree,
      inodesUsed: s.files - s.ffree,
      inodesUsedPercent: pct(s.files - s.ffree, s.files),
    });
  } catch {
    /* statfs unavailable */
  }
  const up = Math.floor(uptime());
  return {
    timestamp: new Date(now).toISOString(),
    cpu: cs.map((c, i) => ({ cpu: i, modelName: c.model, mhz: c.speed, cores: 1 })),
    cpu_times: cs.map((c, i) => ({
      cpu: `cpu${i}`,
      user: c.times.user / 1000,
      system: c.times.sys / 1000,
      idle: c.times.idle / 1000,
      nice: c.times.nice / 1000,
      irq: c.times.irq / 1000,
    })),
    disk,
    host: {
      hostname: hostname(),
      uptime: up,
      bootTime: Math.floor(now / 1000) - up,
      procs: procCount(),
      os: process.platform,
      platform: rel.ID ?? process.platform,
      platformVersion: rel.VERSION_ID ?? '',
      kernelVersion: release(),
      kernelArch: machine(),
    },
    memory: { total, available, used: total - free, usedPercent: pct(total - available, total), free },
  };
}
