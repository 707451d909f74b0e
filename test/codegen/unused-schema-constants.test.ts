/**
 * ajv's unread schema constants are dropped from validators.js; everything else stays as ajv
 * wrote it (the modules' behaviour is held to plain ajv's by shared-validators-equivalence).
 */
import { describe, expect, it } from 'vitest';
import { withoutUnusedSchemaConstants } from '../../src/codegen/targets/unused-schema-constants.js';

describe('withoutUnusedSchemaConstants', () => {
  it('drops a JSON constant nothing reads and keeps one the code reads', () => {
    const code = [
      'const schema0 = {"type":"string"};',
      'const schema1 = {"enum":["a","b"]};',
      'function validate0(data){ return schema1.enum.includes(data); }',
    ].join('\n');
    expect(withoutUnusedSchemaConstants(code)).toBe(
      [
        'const schema1 = {"enum":["a","b"]};',
        'function validate0(data){ return schema1.enum.includes(data); }',
      ].join('\n'),
    );
  });

  it('keeps a constant whose name occurs anywhere else, even in a string', () => {
    const code = ['const schema2 = {"a":1};', 'const schema3 = {"const":"schema2"};'].join('\n');
    expect(withoutUnusedSchemaConstants(code)).toBe('const schema2 = {"a":1};');
  });

  it('keeps a declaration whose value is not a JSON literal (it could run code)', () => {
    const code = 'const schema4 = sideEffect();\nconst schema5 = {a: 1};';
    expect(withoutUnusedSchemaConstants(code)).toBe(code);
  });

  it('matches names whole: schema1 is not read by a use of schema12', () => {
    const code = 'const schema1 = {};\nconst schema12 = {};\nuse(schema12);';
    expect(withoutUnusedSchemaConstants(code)).toBe('const schema12 = {};\nuse(schema12);');
  });
});
