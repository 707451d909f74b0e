/** Output formats of a catalog check, on a hand-made report. */
import { describe, expect, it } from 'vitest';
import { formatReport, type CatalogCheckReport, type CompatibilityViolation } from 'evgen';

const violation: CompatibilityViolation = {
  file: 'events/a,b/Odd:Name/v2.schema.json',
  pointer: '/properties/x',
  path: '#/properties/x',
  code: 'TYPE_CHANGED',
  message: 'the type of "x" changed incompatibly (TYPE_CHANGED) — 100% broken',
  hint: 'keep the old type',
  deployFirst: 'none',
  eventType: 'a.B',
  version: 2,
  against: 1,
  direction: 'backward',
  mode: 'FULL',
  policy: 'evgen',
};
const report: CatalogCheckReport = {
  ok: false,
  violations: [violation],
  events: 1,
  pairsChecked: 1,
};

describe('report formats', () => {
  it('text: file#path: RULE: message, hint, deploy order, summary', () => {
    expect(formatReport('text', report)).toBe(
      [
        'events/a,b/Odd:Name/v2.schema.json#/properties/x: TYPE_CHANGED: the type of "x" changed incompatibly (TYPE_CHANGED) — 100% broken',
        '  hint: keep the old type',
        '  deploy: no deploy order is safe',
        'evgen check: 1 violation (1 events, 1 version pairs checked)',
        '',
      ].join('\n'),
    );
  });

  it('github: escapes workflow-command properties and data', () => {
    const [annotation] = formatReport('github', report).split('\n');
    expect(annotation).toBe(
      '::error file=events/a%2Cb/Odd%3AName/v2.schema.json,title=TYPE_CHANGED at #/properties/x::' +
        'the type of "x" changed incompatibly (TYPE_CHANGED) — 100%25 broken%0Ahint: keep the old type%0Adeploy: no deploy order is safe',
    );
  });

  it('json: fixed keys, nulls for absent fields', () => {
    const parsed = JSON.parse(
      formatReport(
        'json',
        { ...report, violations: [{ ...violation, against: undefined, direction: undefined }] },
        { against: 'main' },
      ),
    ) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual([
      'ok',
      'against',
      'events',
      'pairsChecked',
      'problems',
      'violations',
    ]);
    expect(parsed['against']).toBe('main');
    expect((parsed['violations'] as Record<string, unknown>[])[0]).toMatchObject({
      against: null,
      direction: null,
      deployFirst: 'none',
    });
  });

  it('a compatible report says so', () => {
    expect(
      formatReport(
        'text',
        { ok: true, violations: [], events: 3, pairsChecked: 2 },
        { against: 'HEAD' },
      ),
    ).toBe('evgen check: compatible against HEAD (3 events, 2 version pairs checked)\n');
  });
});
