/** Stops the shared test registry `start.ts` started (only the PID in its PID file). */
import { stopSharedRegistry } from './apicurio.js';

const stopped = await stopSharedRegistry();
process.stdout.write(stopped ? 'registry stopped\n' : 'no registry of ours was running\n');
