/**
 * First-use messages of the CLI: a consumer in a catalog without events is told how to get one
 * (not handed an empty list), a reader that closes the pipe early (`evgen check | head`) ends the
 * run quietly instead of an EPIPE stack trace, and `evgen trace` says when nobody subscribes.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatTrace, type MessageTrace } from '../../src/cli/commands/trace.js';
import { runCliCaptured } from './capture-output.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

describe('first-use messages', () => {
  it('a subscription in a catalog with no events hints at evgen new, not at an empty list', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'evgen-first-use-'));
    try {
      await mkdir(join(dir, 'events', '_consumers'), { recursive: true });
      await writeFile(
        join(dir, 'events', '_consumers', 'billing-service.json'),
        JSON.stringify({ description: 'Bills orders.', subscribes: ['shop.OrderPlaced'] }),
      );
      const result = await runCliCaptured('check', '--events', join(dir, 'events'));
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('subscribes to unknown event type "shop.OrderPlaced"');
      expect(result.stderr).toContain('the catalog has no events yet: create one with `evgen new');
      expect(result.stderr).not.toMatch(/event types: *$/m);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('evgen check whose reader closed the pipe ends with its own exit code and no EPIPE trace', async () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', join(REPO, 'src/cli/main.ts'), 'check', '--events', join(REPO, 'events')],
      { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // The reader goes away before evgen writes anything, as `head` does after its lines.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(code).toBe(0);
  }, 60_000);

  it('evgen trace says that no consumer subscribes to the event type, rather than that none committed it', () => {
    const trace: MessageTrace = {
      messageId: '0190a0b0-0000-7000-8000-000000000001',
      outboxKind: 'relay',
      outbox: null,
      cdcProblems: null,
      inbox: [],
      notHandledBy: [],
      subscribedBy: [],
      eventType: 'order.OrderArchived',
      deadLetters: null,
      published: null,
    };
    expect(formatTrace(trace)).toContain(
      'inbox: no consumer in the catalog subscribes to order.OrderArchived, so none will commit it',
    );
    const subscribed = formatTrace({
      ...trace,
      subscribedBy: ['archive-service'],
      notHandledBy: ['archive-service'],
    });
    expect(subscribed).toContain('inbox: no consumer has committed it');
    expect(subscribed).toContain('inbox: archive-service (subscribed) has not committed it');
  });
});
