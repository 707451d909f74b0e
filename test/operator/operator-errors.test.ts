/**
 * Operator commands given a bad URL, id or broker list, or refused by the server, say so in a
 * short problem (no stack trace) and exit 2, and never print a password — neither the
 * userinfo's nor one given as a `?password=` query parameter. Against the machine's real
 * PostgreSQL and RabbitMQ (a closed port for "unreachable").
 */
import { describe, expect, it } from 'vitest';
import { redactText, redactUrl } from '../../src/cli/redact-secrets.js';
import { runCliCaptured, type CliResult } from '../cli/capture-output.js';

const SECRET = 'hunter2-secret';

function expectShortRefusal(result: CliResult, what: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stderr).toMatch(what);
  const output = result.stdout + result.stderr;
  expect(output).not.toContain(SECRET);
  expect(output).not.toMatch(/^\s+at /m); // no stack frames
  expect(output.trim().split('\n').length).toBeLessThanOrEqual(2); // the problem and its hint
}

describe('operator commands refuse bad input in one short problem, exit 2', () => {
  it('an unparsable database URL', async () => {
    expectShortRefusal(
      await runCliCaptured(
        'outbox',
        'status',
        '--database-url',
        `postgres://u@host:notaport/db?password=${SECRET}`,
      ),
      /database-url-invalid: .* is not a valid URL/,
    );
  });

  it('a database URL whose password is a query parameter, when the server cannot be reached', async () => {
    expectShortRefusal(
      await runCliCaptured(
        'outbox',
        'status',
        '--database-url',
        `postgres://u@127.0.0.1:1/db?password=${SECRET}`,
      ),
      /database-unreachable: cannot reach the database postgres:\/\/u@127\.0\.0\.1:1\/db\?password=\*\*\*/,
    );
  });

  it('a driver error the command does not know (no user name for PostgreSQL)', async () => {
    expectShortRefusal(
      await runCliCaptured('outbox', 'dead', '--database-url', 'postgres://127.0.0.1:5432/test'),
      /^evgen: .*user name/,
    );
  });

  it('an outbox id beyond the bigint range', async () => {
    expectShortRefusal(
      await runCliCaptured(
        'outbox',
        'revive',
        '9223372036854775808',
        '--database-url',
        'postgres://postgres@127.0.0.1:5432/test',
      ),
      /bad-id: not an id: outbox id 9223372036854775808/,
    );
  });

  it('a bad --kafka-brokers list', async () => {
    for (const brokers of ['127.0.0.1:99999', 'not a broker:::', 'host-without-port']) {
      expectShortRefusal(
        await runCliCaptured('dlq', 'list', '--kafka-brokers', brokers),
        /--kafka-brokers: invalid-option: .* is not a broker address host:port/,
      );
    }
  });

  it('RabbitMQ refusing the login (403 ACCESS_REFUSED), the password given as a query parameter', async () => {
    expectShortRefusal(
      await runCliCaptured(
        'dlq',
        'list',
        '--amqp-url',
        `amqp://guest:${SECRET}@127.0.0.1:5672/?password=${SECRET}`,
      ),
      /broker-unreachable: cannot reach RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672\/\?password=\*\*\*: .*403/,
    );
  });
});

describe('redaction', () => {
  it('removes the userinfo password and secret query parameters from URLs and free text', () => {
    expect(redactUrl(`amqp://u@h/?password=${SECRET}&heartbeat=5`)).toBe(
      'amqp://u@h/?password=***&heartbeat=5',
    );
    expect(redactUrl(`postgres://u:${SECRET}@h/db?sslpassword=${SECRET}`)).toBe(
      'postgres://u:***@h/db?sslpassword=***',
    );
    expect(
      redactText(`failed: mysql://root:${SECRET}@db:3306/x?PASSWORD=${SECRET};token=${SECRET}`),
    ).toBe('failed: mysql://root:***@db:3306/x?PASSWORD=***;token=***');
  });
});
