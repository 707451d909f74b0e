/**
 * ajv's error reports and call contexts are rewritten only in the exact shapes ajv writes; the
 * modules' behaviour is held to plain ajv's by shared-validators-equivalence.
 */
import { describe, expect, it } from 'vitest';
import { compactAjvCode } from '../../src/codegen/targets/compact-ajv-code.js';

const report = (name: string, object: string) =>
  [
    `const ${name} = ${object};`,
    'if(vErrors === null){',
    `vErrors = [${name}];`,
    '}',
    'else {',
    `vErrors.push(${name});`,
    '}',
    'errors++;',
  ].join('\n');

const HEADER =
  'function validate3(data, {instancePath="", parentData, parentDataProperty, rootData=data}={}){';

describe('compactAjvCode', () => {
  it('folds an error report into one push and drops its schemaPath', () => {
    const code = report(
      'err0',
      '{instancePath:instancePath+"/a,schemaPath:\\"x",schemaPath:"#/type",keyword:"type",params:{type: "string"}}',
    );
    expect(compactAjvCode(code)).toBe(
      '(vErrors ??= []).push({instancePath:instancePath+"/a,schemaPath:\\"x",keyword:"type",params:{type: "string"}});\nerrors++;',
    );
  });

  it('leaves a report whose uses do not match its name', () => {
    const code = report(
      'err1',
      '{instancePath,schemaPath:"#/type",keyword:"type",params:{}}',
    ).replace('[err1]', '[err2]');
    expect(compactAjvCode(code)).toBe(code);
  });

  it("appends a called function's errors without comparing with null", () => {
    expect(
      compactAjvCode(
        'vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate4.errors);',
      ),
    ).toBe('vErrors = vErrors?.concat(validate4.errors) ?? validate4.errors;');
    const other =
      'vErrors = vErrors === null ? validate4.errors : vErrors.concat(validate5.errors);';
    expect(compactAjvCode(other)).toBe(other);
  });

  it('drops the call context from headers and calls when nothing else names it', () => {
    const code = [
      HEADER,
      'if(!(validate4(data.total, {instancePath:instancePath+"/total",parentData:data,parentDataProperty:"total",rootData}))){',
      'if(!(validate5(data[i0], {instancePath:instancePath+"/" + i0,parentData:data,parentDataProperty:i0,rootData}))){',
      'if(!(validate6(data, {instancePath,parentData,parentDataProperty,rootData}))){',
    ].join('\n');
    expect(compactAjvCode(code)).toBe(
      [
        'function validate3(data, {instancePath=""}={}){',
        'if(!(validate4(data.total, {instancePath:instancePath+"/total"}))){',
        'if(!(validate5(data[i0], {instancePath:instancePath+"/" + i0}))){',
        'if(!(validate6(data, {instancePath}))){',
      ].join('\n'),
    );
  });

  it('keeps the call context everywhere when any other code names it', () => {
    const code = [
      HEADER,
      'if(!(validate4(data.a, {instancePath:instancePath+"/a",parentData:data,parentDataProperty:"a",rootData}))){',
      'const x = rootData.b;',
    ].join('\n');
    expect(compactAjvCode(code)).toBe(code);
  });

  it('keeps dynamicAnchors (2020-12) while dropping the rest of the context', () => {
    const code = [
      'function validate7(data, {instancePath="", parentData, parentDataProperty, rootData=data, dynamicAnchors={}}={}){',
      'if(!(validate8(data.a, {instancePath:instancePath+"/a",parentData:data,parentDataProperty:"a",rootData,dynamicAnchors}))){',
      'if(!(validate9(data, {instancePath,parentData,parentDataProperty,rootData,dynamicAnchors}))){',
    ].join('\n');
    expect(compactAjvCode(code)).toBe(
      [
        'function validate7(data, {instancePath="", dynamicAnchors={}}={}){',
        'if(!(validate8(data.a, {instancePath:instancePath+"/a",dynamicAnchors}))){',
        'if(!(validate9(data, {instancePath,dynamicAnchors}))){',
      ].join('\n'),
    );
  });

  it('keeps the call context when a header has another shape', () => {
    const code = [
      HEADER,
      'function validate7(data, {instancePath="", parentData, parentDataProperty, rootData=data, other}={}){',
    ].join('\n');
    expect(compactAjvCode(code)).toBe(code);
  });
});
