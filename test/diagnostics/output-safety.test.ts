/**
 * Diagnostics in every output format: one shape (file, pointer, code, message, hint, severity)
 * for catalog problems and compatibility findings; text from schemas can neither forge a GitHub
 * workflow command nor pass terminal escapes through; `check --format json|github` carries the
 * exit-2 problems with their codes.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatDiagnostics, printable, type Diagnostic } from '../../src/diagnostics/index.js';
import { evgen, exampleCopy } from '../compat/support/cli-run.js';

const FORGED = 'x\n::error file=README.md,line=1::FORGED';
const ANSI = '\u001b[31mred\u001b[0m\u001b]0;title\u0007';

const hostile: Diagnostic = {
  file: `events/a,b/${FORGED}.json`,
  pointer: `/properties/${FORGED}${ANSI}`,
  code: 'TYPE_CHANGED',
  message: `property ${FORGED} changed ${ANSI}\r100%`,
  hint: `rename ${FORGED}`,
};

/** No output line may start a workflow command except the ones evgen meant to write. */
function workflowCommands(output: string): string[] {
  return output.split('\n').filter((line) => line.startsWith('::'));
}

function expectNoControlCharacters(output: string): void {
  // Only the line breaks evgen writes itself remain; no ESC, CR, BEL or other control character.
  expect(output.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
}

describe('formatters', () => {
  it('printable shows control characters as visible escapes and drops terminal sequences', () => {
    expect(printable(FORGED)).toBe('x\\u000a::error file=README.md,line=1::FORGED');
    expect(printable(ANSI)).toBe('red');
    expect(printable('tab\there\u0085')).toBe('tab\\u0009here\\u0085');
  });

  it('github: one annotation, hostile text escaped per GitHub rules', () => {
    const output = formatDiagnostics('github', [hostile]);
    expect(workflowCommands(output)).toHaveLength(1);
    expect(output.split('\n').filter((line) => line !== '')).toHaveLength(1);
    const [annotation] = workflowCommands(output);
    // Properties: `,` and `:` escaped, so `file=` cannot be ended early.
    expect(annotation).toMatch(
      /^::error file=events\/a%2Cb\/x\\u000a%3A%3Aerror file=README\.md%2Cline=1%3A%3AFORGED\.json,title=TYPE_CHANGED at #/,
    );
    // Data: `%` escaped first, the line break of the hint is %0A.
    expect(annotation).toContain('100%25%0Ahint: rename');
    expectNoControlCharacters(output);
  });

  it('text and json keep hostile text on its line and escape-free', () => {
    const text = formatDiagnostics('text', [hostile]);
    expect(text.split('\n')).toHaveLength(3);
    expect(text.split('\n')[0]).toMatch(
      /^events\/a,b\/x\\u000a::error .*: TYPE_CHANGED: property /,
    );
    expect(workflowCommands(text)).toEqual([]);
    expectNoControlCharacters(text);
    const json = formatDiagnostics('json', [hostile]);
    expect(json).not.toContain('\\u001b');
    expect(json).not.toContain('\\r');
    const parsed = JSON.parse(json) as { diagnostics: Record<string, string>[] };
    expect(parsed.diagnostics[0]).toMatchObject({ severity: 'error', code: 'TYPE_CHANGED' });
    expect(Object.keys(parsed.diagnostics[0]!)).toEqual([
      'severity',
      'code',
      'file',
      'pointer',
      'message',
      'hint',
    ]);
  });

  it('warnings say so in every format', () => {
    const warning: Diagnostic = { ...hostile, severity: 'warning', file: 'a.json' };
    expect(formatDiagnostics('text', [warning])).toContain('a.json#/properties/');
    expect(formatDiagnostics('text', [warning])).toContain(': warning: TYPE_CHANGED: ');
    expect(formatDiagnostics('github', [warning])).toMatch(/^::warning file=a\.json,/);
  });
});

describe('evgen check output', () => {
  let copy: Awaited<ReturnType<typeof exampleCopy>>;
  beforeEach(async () => {
    copy = await exampleCopy();
  });
  afterEach(async () => {
    await copy.dispose();
  });

  const orderCreated = () => join(copy.events, 'order', 'OrderCreated');

  it('a property named like a workflow command cannot forge an annotation (github, text, json)', async () => {
    const schema = JSON.parse(await readFile(join(orderCreated(), 'v2.schema.json'), 'utf8')) as {
      properties: Record<string, unknown>;
      required: string[];
    };
    const name = `${FORGED}${ANSI}`;
    schema.properties[name] = { type: 'string', title: ANSI };
    schema.required.push(name);
    await writeFile(join(orderCreated(), 'v3.schema.json'), JSON.stringify(schema));

    const github = await evgen('check', '--events', copy.events, '--format', 'github');
    expect(github.code).toBe(1);
    const commands = workflowCommands(github.stdout).filter(
      (command) => !command.startsWith('::notice title=evgen check::no --against given'),
    );
    expect(commands.length).toBeGreaterThan(0);
    for (const command of commands)
      expect(command).toMatch(
        /^::error file=[^,:]*events\/order\/OrderCreated\/v3\.schema\.json,title=/,
      );
    expect(github.stdout).not.toMatch(/^::error file=README/m);
    expectNoControlCharacters(github.stdout);

    const text = await evgen('check', '--events', copy.events);
    expect(text.code).toBe(1);
    expect(workflowCommands(text.stdout)).toEqual([]);
    expectNoControlCharacters(text.stdout);

    const json = await evgen('check', '--events', copy.events, '--format', 'json');
    expect(json.code).toBe(1);
    expect(json.stdout).not.toContain('\\u001b');
    const report = JSON.parse(json.stdout) as { violations: { pointer: string }[] };
    expect(report.violations.some((v) => v.pointer.includes('x\\u000a::error'))).toBe(true);
  });

  it('--format json carries exit-2 catalog problems with their codes on stdout', async () => {
    await writeFile(join(orderCreated(), 'v4.schema.json'), '{"type": "object"}');
    const result = await evgen('check', '--events', copy.events, '--format', 'json');
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as {
      ok: boolean;
      problems: Diagnostic[];
      violations: unknown[];
    };
    expect(report.ok).toBe(false);
    expect(report.violations).toEqual([]);
    expect(report.problems.map((problem) => problem.code)).toContain('version-gap');
    expect(report.problems[0]).toMatchObject({ severity: 'error' });
    expect(report.problems[0]!.file).toContain('events/order/OrderCreated');
  });

  it('--format github carries exit-2 problems as annotations; text prints them with codes on stderr', async () => {
    const broken = join(copy.events, 'order', 'Broken');
    await mkdir(broken);
    await writeFile(join(broken, 'v1.schema.json'), '{"type": "object"}');
    const github = await evgen('check', '--events', copy.events, '--format', 'github');
    expect(github.code).toBe(2);
    expect(github.stdout).toMatch(
      /^::error file=[^,]*events\/order\/Broken\/event\.json,title=[a-z-]+ at #::/m,
    );
    const text = await evgen('check', '--events', copy.events);
    expect(text.code).toBe(2);
    expect(text.stdout).toBe('');
    expect(text.stderr).toMatch(/events\/order\/Broken\/event\.json: missing-event-json: /);
  });

  it('an unknown --against ref is a located problem in json too', async () => {
    const result = await evgen(
      'check',
      '--events',
      copy.events,
      '--against',
      'no-such-ref-anywhere',
      '--format',
      'json',
    );
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as { problems: Diagnostic[] };
    expect(report.problems.map((problem) => problem.code)).toEqual(['git-ref']);
  });
});

describe('evgen check without a baseline', () => {
  it('says once that released versions were not checked and suggests --against origin/main', async () => {
    const copy = await exampleCopy();
    try {
      const text = await evgen('check', '--events', copy.events);
      expect(text.code).toBe(0);
      expect(text.stdout.match(/--against origin\/main/g)).toHaveLength(1);
      const github = await evgen('check', '--events', copy.events, '--format', 'github');
      expect(github.stdout).toMatch(
        /^::notice title=evgen check::no --against given: .*--against origin\/main$/m,
      );
      const json = await evgen('check', '--events', copy.events, '--format', 'json');
      expect(() => JSON.parse(json.stdout) as unknown).not.toThrow();
    } finally {
      await copy.dispose();
    }
  });
});
