/**
 * Broker stalls for fault tests: the broker process paused (SIGSTOP) and continued (SIGCONT) in a
 * rhythm, as a broker in long GC pauses or on an overloaded host behaves. Only a PID that still
 * runs `kafka.Kafka` is signalled, and the broker is always left running.
 */
import { waitUntilStopped } from '../broker-process.js';
import { isKafkaProcess } from './broker.js';

export interface StallRhythm {
  /** How long each pause lasts. */
  readonly pauseMs: number;
  /** Start of one pause to the start of the next (pause + running time). */
  readonly periodMs: number;
  /** Number of pauses. */
  readonly times: number;
}

/** The rhythm of the reported loss: paused 250 ms of every 350 ms, 14 times (~4.9 s). */
export const GC_PAUSE_RHYTHM: StallRhythm = { pauseMs: 250, periodMs: 350, times: 14 };

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function signal(pid: number, name: 'SIGSTOP' | 'SIGCONT'): void {
  if (!isKafkaProcess(pid)) throw new Error(`pid ${pid} is not a running kafka.Kafka broker`);
  process.kill(pid, name);
}

/**
 * Pauses the broker `pid` (SIGSTOP, refused unless it runs `kafka.Kafka`) and resolves once every
 * thread of it is stopped, for a test that relies on a broker that cannot answer. The caller
 * continues it (SIGCONT), also when this throws.
 */
export async function pauseBroker(pid: number): Promise<void> {
  signal(pid, 'SIGSTOP');
  await waitUntilStopped(pid);
}

/** Pauses the broker `pid` in `rhythm`; resolves after the last SIGCONT (also on error). */
export async function stallBroker(pid: number, rhythm: StallRhythm): Promise<void> {
  try {
    for (let index = 0; index < rhythm.times; index++) {
      signal(pid, 'SIGSTOP');
      await delay(rhythm.pauseMs);
      signal(pid, 'SIGCONT');
      await delay(rhythm.periodMs - rhythm.pauseMs);
    }
  } finally {
    if (isKafkaProcess(pid)) process.kill(pid, 'SIGCONT');
  }
}
