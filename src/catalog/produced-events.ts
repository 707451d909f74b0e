/** Which events of a catalog the repository writes, as opposed to reads from a dependency. */
import type { EventDefinition } from './model.js';

/** Whether this repository produces the event (it is in its own events folder). */
export function isProduced(event: Pick<EventDefinition, 'dependency'>): boolean {
  return event.dependency === undefined;
}
