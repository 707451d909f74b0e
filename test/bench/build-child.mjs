/**
 * One timed run in a fresh plain-node process (no TypeScript loader: evgen runs from dist/, as
 * users run it), for build.bench.ts and compat.bench.ts: prints `BENCH {"wallMs","cpuMs","rssMb"}`
 * as its last line. Modes:
 *
 *   evgen <evgen CLI args…>            the real CLI (build, build --check, check, …); `code` in
 *                                      the measurement is the CLI's exit code; exits
 *                                      with the CLI's code when it is 2 (after the measurement)
 *   bare                               nothing: what starting this script costs
 *   baseline <events dir> <out dir>    what a plain script does with the same schemas:
 *                                      json-schema-to-typescript (its defaults) and ajv
 *                                      standalone code per version schema, written to files
 *   json-schema-diff <events dir>      json-schema-diff of every pair a FULL_TRANSITIVE
 *                                      `evgen check` compares, from the files
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const started = performance.now();
const [mode, ...args] = process.argv.slice(2);

function files(dir) {
  const found = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...files(path));
    else if (entry.name.endsWith('.schema.json')) found.push(path);
  }
  return found.sort();
}

// Bad input (exit 2) still prints its measurement, then exits with the CLI's code.
let exitCode = 0;
let cliCode = 0;
if (mode === 'evgen') {
  const { runCli } = await import('../../dist/cli/main.js');
  cliCode = await runCli(args);
  if (cliCode > 1) exitCode = cliCode;
} else if (mode === 'baseline') {
  const [events, out] = args;
  const { compile } = await import('json-schema-to-typescript');
  const { Ajv } = await import('ajv');
  const addFormats = (await import('ajv-formats')).default.default;
  const standaloneCode = (await import('ajv/dist/standalone/index.js')).default.default;
  const all = files(events);
  const common = all.filter((file) => file.includes('/_common/'));
  for (const file of all.filter((path) => !common.includes(path))) {
    const schema = JSON.parse(readFileSync(file, 'utf8'));
    const target = join(out, relative(events, file).replace(/\.schema\.json$/, ''));
    mkdirSync(join(target, '..'), { recursive: true });
    const types = await compile(schema, 'Payload', { cwd: join(file, '..') });
    const ajv = new Ajv({ code: { source: true, esm: true }, allErrors: true, strict: false });
    addFormats(ajv);
    for (const shared of common)
      ajv.addSchema({
        ...JSON.parse(readFileSync(shared, 'utf8')),
        $id: pathToFileURL(shared).href,
      });
    const validate = ajv.compile({ ...schema, $id: pathToFileURL(file).href });
    writeFileSync(`${target}.types.ts`, types);
    writeFileSync(`${target}.validator.js`, standaloneCode(ajv, validate));
  }
} else if (mode === 'json-schema-diff') {
  // What another checker does with the pairs `evgen check` compares in a FULL_TRANSITIVE
  // catalog: every version against each earlier one, one call per pair (json-schema-diff reports
  // additions and removals, i.e. both directions), `$ref`s resolved from the files.
  const [events] = args;
  const jsonSchemaDiff = (await import('json-schema-diff')).default;
  const byEvent = new Map();
  for (const file of files(events).filter((path) => !path.includes('/_common/'))) {
    const dir = join(file, '..');
    byEvent.set(dir, [...(byEvent.get(dir) ?? []), file]);
  }
  const versionOf = (file) => Number(/v(\d+)\.schema\.json$/.exec(file)[1]);
  for (const versions of byEvent.values()) {
    versions.sort((a, b) => versionOf(a) - versionOf(b));
    const schemas = versions.map((file) => JSON.parse(readFileSync(file, 'utf8')));
    for (let newer = 1; newer < versions.length; newer++)
      for (let older = 0; older < newer; older++)
        await jsonSchemaDiff.diffSchemas({
          sourceSchema: schemas[older],
          sourceSchemaFile: versions[older],
          destinationSchema: schemas[newer],
          destinationSchemaFile: versions[newer],
        });
  }
} else if (mode !== 'bare') {
  throw new Error(`unknown mode ${String(mode)}`);
}
const usage = process.resourceUsage();
console.log(
  `BENCH ${JSON.stringify({
    wallMs: performance.now() - started,
    cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
    rssMb: usage.maxRSS / 1024,
    code: cliCode,
  })}`,
);
if (exitCode !== 0) process.exit(exitCode);
