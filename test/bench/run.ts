/**
 * `npm run bench`: runs every `*.bench.ts` module beside this file (or those named on the
 * command line) and prints each result as a ratio against a raw baseline measured in the same
 * run. Benchmarks never assert on time; they report.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchResult } from './bench-result.js';

const dir = fileURLToPath(new URL('.', import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => wanted.length === 0 || wanted.some((name) => file.includes(name)))
  .sort();

const results: BenchResult[] = [];
for (const file of files) {
  const module = (await import(pathToFileURL(`${dir}/${file}`).href)) as {
    run: () => Promise<BenchResult[]>;
  };
  console.error(`running ${file} …`);
  for (const result of await module.run()) {
    results.push(result);
    console.log(
      `${result.name}: ${result.subject.toFixed(2)} ${result.unit} vs ${result.baselineName} ${result.baseline.toFixed(2)} ${result.unit}` +
        ` → ratio ${(result.subject / result.baseline).toFixed(2)}${result.note ? `  (${result.note})` : ''}`,
    );
  }
}
if (results.length === 0) console.log('no benchmarks matched');
