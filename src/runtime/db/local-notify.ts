/**
 * Wake-ups inside one process, for databases without LISTEN/NOTIFY (MySQL/MariaDB): a writer
 * whose transaction committed wakes the relays of the same process listening on that channel.
 * Relays in other processes are reached by their polling.
 */
type Listener = (payload: string) => void;

const channels = new Map<string, Set<Listener>>();

/** Subscribes `listener` to `channel`; returns the unsubscribe function. */
export function listenLocally(channel: string, listener: Listener): () => void {
  let listeners = channels.get(channel);
  if (listeners === undefined) {
    listeners = new Set();
    channels.set(channel, listeners);
  }
  // One entry per subscription, even when the same function subscribes twice.
  const entry: Listener = (payload) => listener(payload);
  listeners.add(entry);
  return () => {
    listeners.delete(entry);
    if (listeners.size === 0 && channels.get(channel) === listeners) channels.delete(channel);
  };
}

/** Calls every listener of `channel` in this process; a throwing listener does not stop the others. */
export function notifyLocally(channel: string, payload = ''): void {
  for (const listener of [...(channels.get(channel) ?? [])]) {
    try {
      listener(payload);
    } catch {
      // A listener's failure is its own; the writer has committed already.
    }
  }
}
