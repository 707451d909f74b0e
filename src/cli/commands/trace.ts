/**
 * `evgen trace <messageId>`: where one event is, in one answer: its outbox row (written? SENT?
 * how many publish attempts, last error, DEAD?), which consumers committed it in their inbox and
 * when, which subscribed consumers have not, and the dead letters holding it (with the handling
 * attempts they record) in RabbitMQ dead queues and Kafka and Pulsar dead-letter topics, each marked resolved
 * when its consumer has since committed the message (a replay was handled), and, with Kafka
 * given, the records carrying it on the catalog's event topics (how an event written to a CDC
 * outbox, whose rows are gone at once, shows it was published). Reads the same
 * tables, queues and topics the runtime uses; with no broker configured the dead letters are left
 * out and the output says so.
 * `evgen trace --key <idempotency-key>`: the same for every event one HTTP request wrote (see
 * trace-key.ts).
 * Exit 0 found, 1 found nowhere, 2 bad input.
 */
import type { Command } from 'commander';
import { printableJson } from '../../diagnostics/printable.js';
import { addFolderOptions, refuse, reportingProblems } from '../command-support.js';
import { loadConfig } from '../config.js';
import { EXIT_FINDINGS, EXIT_OK } from '../exit-codes.js';
import {
  addAmqpOptions,
  addDatabaseOptions,
  addKafkaOptions,
  addPulsarOptions,
  withDatabase,
} from '../operator-options.js';
import { loadProjectCatalog } from '../project-catalog.js';
import { formatTrace, traceFound, traceMessages } from './message-trace.js';
import { runKeyTrace, type KeyTraceOptions } from './trace-key.js';

export { formatTrace, type MessageTrace, type TraceOptions } from './message-trace.js';

export function registerTrace(program: Command): void {
  addPulsarOptions(
    addKafkaOptions(
      addAmqpOptions(
        addDatabaseOptions(
          addFolderOptions(
            program
              .command('trace')
              .description(
                'where one event is: outbox row, inbox rows per consumer, dead letters; with --key, the HTTP request of an Idempotency-Key and every event it wrote',
              )
              .argument('[messageId]', 'the envelope messageId (or give --key)')
              .option(
                '--key <idempotency-key>',
                'trace the request sent with this Idempotency-Key instead: its stored row and the events it wrote',
              )
              .option(
                '--idempotency-table <name>',
                'idempotency table name, in --schema (default: idempotency_key)',
              )
              .option('--json', 'print JSON')
              .option(
                '--cdc',
                'the services write a CDC outbox (rows go at once): no outbox row lookup',
              ),
          ),
        ),
      ),
    ),
  ).action(async (messageId: string | undefined, options: KeyTraceOptions) => {
    process.exitCode = await runTrace(messageId, options);
  });
}

export function runTrace(messageId: string | undefined, options: KeyTraceOptions): Promise<number> {
  return reportingProblems(async () => {
    if ((messageId === undefined) === (options.key === undefined)) {
      throw refuse({
        code: 'trace-target',
        file: messageId === undefined ? '<messageId>' : '--key',
        message:
          messageId === undefined
            ? 'nothing to trace: give a messageId or --key <idempotency-key>'
            : 'give either a messageId or --key <idempotency-key>, not both',
        hint: 'evgen trace <messageId> follows one event; evgen trace --key <key> follows the HTTP request sent with that Idempotency-Key and the events it wrote',
      });
    }
    if (options.key !== undefined) return runKeyTrace(options.key, options);
    const config = await loadConfig(options);
    const { catalog } = await loadProjectCatalog(config);
    const [trace] = await withDatabase(options, (db) =>
      traceMessages([messageId!], options, config, catalog, db),
    );
    process.stdout.write(
      options.json === true ? `${printableJson(trace!)}\n` : formatTrace(trace!),
    );
    return traceFound(trace!) ? EXIT_OK : EXIT_FINDINGS;
  });
}
