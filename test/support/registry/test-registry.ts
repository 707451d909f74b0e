/**
 * Test access to the real schema registry `global-setup.ts` started. Every test works under its
 * own random domain (so its subjects are its own) and deletes its subjects afterwards (soft, then
 * permanent); a registry that does not answer fails the test loudly, never skips it.
 */
import { randomBytes } from 'node:crypto';
import {
  createSchemaRegistryClient,
  type SchemaRegistryClient,
} from '../../../src/runtime/registry/schema-registry-client.js';
import { TEST_REGISTRY_URL } from './apicurio.js';

export { TEST_REGISTRY_URL };

/** A lowercase domain name no other test uses: `r1a2b3c4d`. */
export function uniqueDomain(): string {
  return `r${randomBytes(4).toString('hex')}`;
}

export interface TestRegistry {
  readonly url: string;
  readonly client: SchemaRegistryClient;
  /** Deletes every subject whose name contains `marker` (soft, then permanent). */
  cleanup(marker: string): Promise<void>;
}

export async function connectTestRegistry(url = TEST_REGISTRY_URL): Promise<TestRegistry> {
  const client = createSchemaRegistryClient({ url, retries: 0 });
  try {
    await client.subjects();
  } catch (error) {
    throw new Error(
      `the schema registry is not reachable at ${url}: start it with npx tsx test/support/registry/start.ts (${(error as Error).message})`,
      { cause: error },
    );
  }
  return {
    url,
    client,
    async cleanup(marker) {
      for (const subject of await client.subjects()) {
        if (!subject.includes(marker)) continue;
        await client.deleteSubject(subject);
        await client.deleteSubject(subject, true);
      }
    },
  };
}
