/**
 * One finder answers both questions the delivery core asks of a gap: its class (`classifyFailure`
 * → 'gap') and the version the aggregate waits for (the gap wait's clock). They used to be two
 * walks that disagreed: the class looked one level deep, the version followed `cause`.
 */
import { describe, expect, it } from 'vitest';
import { AggregateVersionGapError } from '../../src/runtime/inbox/aggregate-order.js';
import { InboxHandlerError } from '../../src/runtime/inbox/inbox-handler-error.js';
import { classifyFailure } from '../../src/runtime/delivery/failure.js';
import { findGapError } from '../../src/runtime/delivery/gap-error.js';

const gap = () => new AggregateVersionGapError('Order', 'o-1', 4, 9);

/** Wraps `inner` in `levels` plain Errors through `cause`, as a user's handler might. */
function wrapped(inner: unknown, levels: number): unknown {
  let error = inner;
  for (let k = 0; k < levels; k++) error = new Error(`layer ${k}`, { cause: error });
  return error;
}

describe('findGapError', () => {
  it.each([
    ['the gap itself', gap()],
    ['wrapped by the inbox guard', new InboxHandlerError('c', 'm', gap())],
    [
      "the inbox's wrapper wrapped again by the user",
      wrapped(new InboxHandlerError('c', 'm', gap()), 1),
    ],
    ['seven wrappers down', wrapped(gap(), 7)],
  ])('%s: a gap expecting version 4, classified as a gap', (_, error) => {
    expect(findGapError(error)).toEqual({ expected: 4 });
    expect(classifyFailure(error)).toBe('gap');
  });

  it('a wrapper that names the gap only by causeType is a gap of unknown version', () => {
    const named = { code: 'SomeWrapper', causeType: 'AggregateVersionGapError', message: 'x' };
    expect(findGapError(named)).toEqual({ expected: undefined });
    expect(classifyFailure(named)).toBe('gap');
  });

  it('a gap error from another copy of the runtime is recognised by its code', () => {
    const foreign = { code: 'AggregateVersionGapError', expected: 2, retryable: true };
    expect(findGapError(foreign)).toEqual({ expected: 2 });
    expect(findGapError({ code: 'AggregateVersionGapError', expected: 'two' })).toEqual({
      expected: undefined,
    });
  });

  it.each([
    ['another error', new Error('other')],
    ['the inbox wrapping another error', new InboxHandlerError('c', 'm', new Error('x'))],
    ['a value that is not an object', 'AggregateVersionGapError'],
    ['undefined', undefined],
    ['a gap nine levels down (beyond the bound)', wrapped(gap(), 9)],
  ])('%s: no gap, and not classified as one', (_, error) => {
    expect(findGapError(error)).toBeUndefined();
    expect(classifyFailure(error)).not.toBe('gap');
  });

  it('a cause chain that loops ends at the bound', () => {
    const a = new Error('a') as Error & { cause?: unknown };
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(findGapError(a)).toBeUndefined();
  });
});
