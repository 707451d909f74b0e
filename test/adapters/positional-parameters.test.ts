import { describe, expect, it } from 'vitest';
import { splitAtParameters } from '../../src/runtime/adapters/positional-parameters.js';

describe('splitAtParameters', () => {
  it('cuts at every $n, repeats included, in order of occurrence', () => {
    expect(splitAtParameters('SELECT $1::text, $2 WHERE x = $1 AND y=$10')).toEqual({
      pieces: ['SELECT ', '::text, ', ' WHERE x = ', ' AND y=', ''],
      parameters: [0, 1, 0, 9],
    });
  });

  it('leaves $n inside strings, quoted identifiers, dollar quotes and comments as text', () => {
    const text = [
      `SELECT '$1 it''s', E'\\'$2', "col$3", $$ body $4 $$, $fn$ $5 $fn$ -- $6`,
      `/* $7 */ FROM t$8 WHERE a = $9`,
    ].join('\n');
    const split = splitAtParameters(text);
    expect(split.parameters).toEqual([8]);
    expect(split.pieces.join('$9')).toBe(text);
  });

  it('returns the whole text as one piece when there is no parameter', () => {
    expect(splitAtParameters('SELECT 1')).toEqual({ pieces: ['SELECT 1'], parameters: [] });
  });
});

describe('splitAtParameters on MySQL', () => {
  it('cuts at every ? in order, leaving ? inside strings, identifiers and comments as text', () => {
    const text = "SELECT ?, 'it\\'s ?', \"?\", `a?` # ?\nFROM t -- ?\nWHERE a = ? /* ? */";
    const split = splitAtParameters(text, 'mysql');
    expect(split.parameters).toEqual([0, 1]);
    expect(split.pieces.join('?')).toBe(text);
    expect(split.pieces[0]).toBe('SELECT ');
  });
});
