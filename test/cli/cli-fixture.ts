/**
 * The usual set-up of a CLI test: a fresh temporary catalog and captured stdout/stderr per test,
 * both undone afterwards. Call at the top level (or in a describe) of a test file.
 */
import { afterEach, beforeEach } from 'vitest';
import {
  oneEvent,
  tempCatalog,
  type CatalogFiles,
  type TempCatalog,
} from '../catalog/temp-catalog.js';
import { captureOutput, type CapturedOutput } from './capture-output.js';

export interface CliFixture {
  /** The current test's catalog (valid inside a test). */
  readonly catalog: TempCatalog;
  /** What the current test printed so far. */
  readonly output: CapturedOutput;
}

export function useCliFixture(files: () => CatalogFiles = () => oneEvent()): CliFixture {
  let catalog: TempCatalog | undefined;
  let output: CapturedOutput | undefined;
  beforeEach(async () => {
    catalog = await tempCatalog(files());
    output = captureOutput();
  });
  afterEach(async () => {
    output?.restore();
    await catalog?.cleanup();
  });
  return {
    get catalog() {
      if (catalog === undefined) throw new Error('useCliFixture: no catalog outside a test');
      return catalog;
    },
    get output() {
      if (output === undefined) throw new Error('useCliFixture: no output outside a test');
      return output;
    },
  };
}
