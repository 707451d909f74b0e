/**
 * CPU time per process group during a benchmark sample, read from Linux's /proc: where a
 * pipeline's cycles go (this Node process, a database server, a JVM) and how busy the whole
 * machine was (other engineers' processes included), so a ratio that a shared 2-core machine
 * caps can be explained with numbers rather than guessed. Linux only; elsewhere it reports
 * nothing.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** How a group's processes are recognised: by PID, or by a test on a process's stat fields. */
export interface ProcessGroup {
  readonly name: string;
  /** Whether a process (its PID, parent PID and command line) belongs to the group. */
  readonly matches: (pid: number, ppid: number, cmdline: string) => boolean;
}

/** CPU milliseconds per group and for the whole machine between two snapshots. */
export interface CpuUsage {
  readonly groups: Readonly<Record<string, number>>;
  /** All CPUs' busy time (user + system + irq + …, not idle or iowait), ms. */
  readonly machineBusyMs: number;
  /** Wall time × CPU count, ms: `machineBusyMs / machineCapacityMs` is the machine's load. */
  readonly machineCapacityMs: number;
}

// USER_HZ: the unit of /proc's CPU times; 100 on every mainstream Linux build.
const TICK_MS = 10;

function readProcesses(): { pid: number; ppid: number; ticks: number; cmdline: string }[] {
  const result = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces) in parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ');
      result.push({
        pid: Number(entry),
        ppid: Number(fields[1]),
        // utime + stime (fields 14 and 15 of stat, 12 and 13 after the name).
        ticks: Number(fields[11]) + Number(fields[12]),
        cmdline,
      });
    } catch {
      // The process ended meanwhile.
    }
  }
  return result;
}

function machineTicks(): { busy: number; cpus: number } {
  try {
    const lines = readFileSync('/proc/stat', 'utf8').split('\n');
    const total = lines[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
    const busy = total.reduce((sum, value, i) => (i === 3 || i === 4 ? sum : sum + value), 0);
    return { busy, cpus: lines.filter((line) => /^cpu\d/.test(line)).length };
  } catch {
    return { busy: 0, cpus: 1 };
  }
}

/** Starts a measurement; the returned function ends it and returns the usage since the start. */
export function startCpuMeasurement(groups: readonly ProcessGroup[]): () => CpuUsage {
  const take = () => {
    const perGroup = new Map<string, Map<number, number>>();
    for (const process of readProcesses()) {
      const group = groups.find((g) => g.matches(process.pid, process.ppid, process.cmdline));
      if (group === undefined) continue;
      const pids = perGroup.get(group.name) ?? new Map<number, number>();
      pids.set(process.pid, process.ticks);
      perGroup.set(group.name, pids);
    }
    return { perGroup, machine: machineTicks(), at: performance.now() };
  };
  const start = take();
  return () => {
    const end = take();
    const used: Record<string, number> = {};
    for (const group of groups) {
      const before = start.perGroup.get(group.name) ?? new Map<number, number>();
      let ticks = 0;
      // A process started during the sample counts from zero.
      for (const [pid, now] of end.perGroup.get(group.name) ?? [])
        ticks += now - (before.get(pid) ?? 0);
      used[group.name] = ticks * TICK_MS;
    }
    return {
      groups: used,
      machineBusyMs: (end.machine.busy - start.machine.busy) * TICK_MS,
      machineCapacityMs: (end.at - start.at) * end.machine.cpus,
    };
  };
}

/** Reads a process's parent PID (0 when it is gone or not on Linux). */
export function parentPid(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}
