/**
 * `npm run bench`: runs every `*.bench.ts` module beside this file (or those named on the
 * command line) and prints each result as a ratio against a raw baseline measured in the same
 * run: medians with the spread (min–max) of the samples, and the goal when there is one. The
 * results are also written as JSON to `.bench-results/latest.json` (gitignored) so a regression
 * is easy to diff. Benchmarks never assert on time; they report.
 *
 * EVGEN_BENCH_SMOKE=1: smallest sizes and one sample (CI runs this so the benchmark cannot rot).
 * EVGEN_BENCH_SIZES=10,100,500,1000: catalog sizes of the build/check series (default 10,100).
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchResult } from './bench-result.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.includes(name)))
  .sort();

function spread(samples: readonly number[] | undefined): string {
  if (samples === undefined || samples.length < 2) return '';
  return ` [${Math.min(...samples).toFixed(2)}–${Math.max(...samples).toFixed(2)}, n=${samples.length}]`;
}

function line(result: BenchResult): string {
  const ratio = result.subject / result.baseline;
  const goal =
    result.goal === undefined
      ? ''
      : `; goal ${result.goal.better === 'higher' ? '≥' : '≤'} ${result.goal.ratio}: ${
          (
            result.goal.better === 'higher'
              ? ratio >= result.goal.ratio
              : ratio <= result.goal.ratio
          )
            ? 'met'
            : 'NOT met'
        }`;
  return (
    `${result.name}: ${result.subject.toFixed(2)} ${result.unit}${spread(result.subjectSamples)}` +
    ` vs ${result.baselineName} ${result.baseline.toFixed(2)} ${result.unit}${spread(result.baselineSamples)}` +
    ` → ratio ${ratio.toFixed(2)}${goal}${result.note ? `  (${result.note})` : ''}`
  );
}

const results: (BenchResult & { file: string })[] = [];
for (const file of files) {
  const module = (await import(pathToFileURL(`${dir}/${file}`).href)) as {
    run: () => Promise<BenchResult[]>;
  };
  console.error(`running ${file} …`);
  for (const result of await module.run()) {
    results.push({ file, ...result });
    console.log(line(result));
  }
}
if (results.length === 0) console.log('no benchmarks matched');
const out = fileURLToPath(new URL('../../.bench-results/', import.meta.url));
mkdirSync(out, { recursive: true });
writeFileSync(
  `${out}latest.json`,
  `${JSON.stringify(
    results.map((result) => ({ ...result, ratio: result.subject / result.baseline })),
    null,
    2,
  )}\n`,
);
console.error(`results written to .bench-results/latest.json`);
