/**
 * `evgen asyncapi [--events DIR] [--config FILE] [--out FILE] [--title T] [--doc-version V]`:
 * the catalog as an AsyncAPI 3.0 document (JSON), on stdout or into one file. The file is
 * replaced atomically, and only when the catalog is valid.
 * Exit 0 written, 2 bad input (invalid catalog, unwritable file).
 */
import { rename, rm, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadCatalog } from '../../catalog/load-catalog.js';
import { renderAsyncApiDocument } from '../../asyncapi/asyncapi-document.js';
import { loadConfig } from '../config.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { EXIT_OK } from '../exit-codes.js';

export interface AsyncApiCommandOptions {
  readonly events?: string;
  readonly config?: string;
  readonly out?: string;
  readonly title?: string;
  readonly docVersion?: string;
}

export function registerAsyncApi(program: Command): void {
  addFolderOptions(
    program
      .command('asyncapi')
      .description('write the catalog as an AsyncAPI 3.0 document (channels, messages, operations)')
      .option('-o, --out <file>', 'write the document to this file instead of stdout')
      .option('--title <title>', 'info.title of the document (default: "evgen event catalog")')
      .option('--doc-version <version>', 'info.version of the document (default: "1.0.0")'),
  ).action(async (options: AsyncApiCommandOptions) => {
    process.exitCode = await runAsyncApi(options);
  });
}

/** The command itself, returning the exit code; usable without commander. */
export function runAsyncApi(options: AsyncApiCommandOptions, cwd = process.cwd()): Promise<number> {
  return reportingProblems(async () => {
    // `--out` here names the document file, not the generated-code folder of evgen.config.json.
    const config = await loadConfig({ events: options.events, config: options.config }, cwd);
    const catalog = await loadCatalog(config.events, {
      eventTypeFormat: config.eventTypeFormat,
      wireFormat: config.wireFormat,
    });
    const document = renderAsyncApiDocument(catalog, {
      ...(options.title !== undefined ? { title: options.title } : {}),
      ...(options.docVersion !== undefined ? { version: options.docVersion } : {}),
    });
    if (options.out === undefined) {
      process.stdout.write(document);
      return EXIT_OK;
    }
    const file = resolve(cwd, options.out);
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      await writeFile(temporary, document);
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw refuse({
        code: 'output-unwritable',
        file: options.out,
        message: `cannot write the AsyncAPI document: ${(error as Error).message}`,
        hint: 'give --out a file path in an existing, writable folder',
      });
    }
    return EXIT_OK;
  });
}
