/**
 * `npx tsx test/bench/cpu-profile-top.ts FILE.cpuprofile… [N]`: the N (default 25) functions
 * with the most self time across the given V8 CPU profiles, with their share of the non-idle
 * samples, and the same summed per source (evgen, each package in node_modules, node itself).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly children?: number[];
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}
interface Profile {
  readonly nodes: ProfileNode[];
  readonly samples: number[];
  readonly timeDeltas: number[];
}

const args = process.argv.slice(2);
const last = Number(args.at(-1));
const top = Number.isInteger(last) ? last : 25;
const files = Number.isInteger(last) ? args.slice(0, -1) : args;

const byFunction = new Map<string, number>();
const bySource = new Map<string, number>();
let total = 0;
let idle = 0;

function sourceOf(url: string): string {
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module !== null) return module[1]!;
  if (url.includes('/src/runtime/')) return 'evgen src/runtime';
  if (url.includes('/test/')) return 'evgen test (bench)';
  if (url.startsWith('node:')) return 'node core';
  return url === '' ? '(native / V8)' : url;
}

for (const file of files) {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map<number, number>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parents.set(child, node.id);
  /** Samples inside the inspector (Profiler.stop writing the profile out) are the profiler's. */
  const profilers = new Set<number>();
  for (const node of profile.nodes)
    for (let id: number | undefined = node.id; id !== undefined; id = parents.get(id))
      if (nodes.get(id)!.callFrame.url === 'node:inspector') {
        profilers.add(node.id);
        break;
      }
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i] ?? 0;
    if (profilers.has(id)) return;
    const { functionName, url, lineNumber } = nodes.get(id)!.callFrame;
    if (functionName === '(idle)' || functionName === '(program)') {
      if (functionName === '(idle)') idle += us;
      else total += us;
      if (functionName === '(idle)') return;
    } else total += us;
    const short = url.replace(/^.*\/(node_modules|src|test)\//, '$1/');
    const name = `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
    const source = ['(garbage collector)', '(program)'].includes(functionName)
      ? functionName
      : sourceOf(url);
    bySource.set(source, (bySource.get(source) ?? 0) + us);
  });
}

const pct = (us: number) => `${((us / total) * 100).toFixed(1)}%`;
console.log(
  `busy ${(total / 1000).toFixed(0)} ms, idle ${(idle / 1000).toFixed(0)} ms (${((idle / (idle + total)) * 100).toFixed(0)}% of the main thread idle)`,
);
console.log('\nself time by source:');
for (const [source, us] of [...bySource].sort((a, b) => b[1] - a[1]).slice(0, 15))
  console.log(`  ${pct(us).padStart(6)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${source}`);
console.log(`\ntop ${top} functions by self time:`);
for (const [name, us] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top))
  console.log(`  ${pct(us).padStart(6)}  ${(us / 1000).toFixed(0).padStart(6)} ms  ${name}`);
