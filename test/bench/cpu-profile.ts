/**
 * A V8 CPU profile of one part of a bench run (the same profiler `node --cpu-prof` uses, but
 * started and stopped around the samples of interest, so the relay's profile is not mixed with
 * the baselines' or the row writing's). On when EVGEN_BENCH_CPU_PROF names a directory: each
 * profiled section is written there as `<name>.cpuprofile` (open in Chrome DevTools, or read
 * the top self-time functions with `test/bench/cpu-profile-top.ts`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';

const DIR = process.env.EVGEN_BENCH_CPU_PROF;

let session: Session | undefined;

/** Runs `work`, profiled into `<name>.cpuprofile` when profiling is on. */
export async function profiled<T>(name: string, work: () => Promise<T>): Promise<T> {
  if (DIR === undefined || DIR === '') return work();
  if (session === undefined) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    // 1 ms: fine enough for functions of a few µs summed over thousands of events.
    await session.post('Profiler.setSamplingInterval', { interval: 1000 });
  }
  await session.post('Profiler.start');
  try {
    return await work();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(DIR, { recursive: true });
    writeFileSync(`${DIR}/${name}.cpuprofile`, JSON.stringify(profile));
  }
}
