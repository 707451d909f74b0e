/**
 * The set-up every registry test shares, written once: the real registry connected before the
 * file's tests (a registry that does not answer fails them loudly), and scratch projects whose
 * subjects (everything under the project's domain) and folders are removed after each test.
 *
 *   const tests = useRegistryTests();
 *   const { domain, events, registry } = await tests.project();
 *   await registry('push');   // evgen registry push --events <events> --registry <url>
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';
import { runCliCaptured, type CliResult } from '../../cli/capture-output.js';
import { placedCatalog, writeCatalog, type Files } from './catalog.js';
import { connectTestRegistry, uniqueDomain, type TestRegistry } from './test-registry.js';

export interface RegistryProject {
  /** The project's own domain: every subject it registers contains it. */
  readonly domain: string;
  /** The project folder (scratch). */
  readonly dir: string;
  /** `<dir>/events`. */
  readonly events: string;
  readonly files: Files;
  /** `evgen registry <command> …args --events <events> --registry <url>`. */
  readonly registry: (command: string, ...args: string[]) => Promise<CliResult>;
}

export interface RegistryTests {
  /** The connected test registry (after the file's `beforeAll`). */
  readonly registry: TestRegistry;
  /**
   * A project with `files` (default: the Placed/Shipped catalog of `domain`) in a scratch
   * folder; after the test its folder and the registry's subjects containing `domain` are gone.
   */
  readonly project: (domain?: string, files?: Files) => Promise<RegistryProject>;
  /** Runs `cleanup` after the current test (in order, after the projects' own). */
  readonly afterwards: (cleanup: () => Promise<void>) => void;
}

export function useRegistryTests(): RegistryTests {
  let registry: TestRegistry | undefined;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    registry = await connectTestRegistry();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });

  const connected = (): TestRegistry => {
    if (registry === undefined) throw new Error('the test registry is connected in beforeAll');
    return registry;
  };

  return {
    get registry() {
      return connected();
    },
    async project(domain = uniqueDomain(), files = placedCatalog(domain)) {
      const dir = await writeCatalog(files);
      const events = join(dir, 'events');
      cleanups.push(async () => {
        await connected().cleanup(domain);
        await rm(dir, { recursive: true, force: true });
      });
      return {
        domain,
        dir,
        events,
        files,
        registry: (command, ...args) =>
          runCliCaptured(
            'registry',
            command,
            ...args,
            '--events',
            events,
            '--registry',
            connected().url,
          ),
      };
    },
    afterwards(cleanup) {
      cleanups.push(cleanup);
    },
  };
}
