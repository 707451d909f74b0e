/**
 * Removes what a test's Connect worker left on the broker: its internal topics (and any other
 * topics it made, such as a schema history) and its group.
 */
import { kafkajsClient } from 'evgen-runtime/kafkajs';
import type { ConnectWorker } from '../../support/connect/connect-worker.js';

export async function removeWorkerTopics(
  brokers: string,
  worker: ConnectWorker,
  extraTopics: readonly string[] = [],
): Promise<void> {
  const admin = await kafkajsClient({ brokers: [brokers] }).admin();
  try {
    await admin.deleteTopics([...worker.internalTopics, ...extraTopics]).catch(() => undefined);
    await admin.deleteGroups([worker.groupId]).catch(() => undefined);
  } finally {
    await admin.close();
  }
}
