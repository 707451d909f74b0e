/**
 * The outage suite: relays and consumers in their own processes, the database (PostgreSQL, or
 * MariaDB in the rows named `MariaDB: …`) and RabbitMQ behind TCP fault proxies, thousands of
 * events over ≥ 20 aggregates, and an oracle that counts business effects per messageId and checks
 * per-aggregate order. Pass = 0 lost, 0 applied twice, 0 out of order, nothing good in the dead
 * queue, every outbox row SENT at the end, every poison message dead-lettered exactly once (read
 * once the work queue and retry tiers are empty), and every aggregate that still had events to
 * apply moving again within the scenario's recovery limit after the fault ended.
 *
 * `npm test` runs the CI subset (shorter faults, fewer events, a few MariaDB rows); `npm run
 * test:faults` runs the whole matrix (EVGEN_FAULTS=full) on both databases and prints the table
 * docs/operations/reliability.md quotes (`-t MariaDB` for the MariaDB rows only).
 */
import { describe, expect, it } from 'vitest';
import { OUTAGE_SCENARIOS } from './support/scenarios.js';
import { runScenario, type ScenarioResult } from './support/outage-run.js';

const full = process.env.EVGEN_FAULTS === 'full';
const scenarios = OUTAGE_SCENARIOS(full).filter((scenario) => full || !scenario.fullOnly);
const results: ScenarioResult[] = [];

describe(`outage suite (${full ? 'full matrix' : 'CI subset'})`, () => {
  it.each(scenarios.map((scenario) => [scenario.name, scenario] as const))(
    '%s',
    async (_name, scenario) => {
      const result = await runScenario(scenario);
      results.push(result);
      const poison =
        result.poisonWritten > 0 ? `${result.poisonDead} of ${result.poisonWritten}` : '–';
      console.log(
        `| ${result.name} | ${result.events} | ${result.lost} | ${result.doubled} | ${result.outOfOrder} | ${result.goodDead} | ${poison} | ${result.unsent} | ${(result.recoveryMs / 1000).toFixed(1)} s (limit ${scenario.recoveryLimitMs / 1000} s) | ${result.notes.join('; ')} |`,
      );
      expect(result).toMatchObject({
        lost: 0,
        doubled: 0,
        outOfOrder: 0,
        goodDead: 0,
        // Every outbox row ends SENT (none left PROCESSING, READY or DEAD).
        unsent: 0,
        // Every poison message dead-lettered exactly once.
        poisonDead: result.poisonWritten,
        poisonDeadTwice: 0,
      });
      if (scenario.poisonAggregate !== undefined) expect(result.poisonWritten).toBeGreaterThan(0);
      // Every aggregate with work left moving again within the limit.
      expect(result.recoveryMs).toBeLessThanOrEqual(scenario.recoveryLimitMs);
    },
    full ? 900_000 : 150_000,
  );
});
