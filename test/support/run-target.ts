/** Runs one target alone and finishes its files as `generate()` does (header, formatting). */
import { finishFile } from '../../src/codegen/generate.js';
import type { GeneratedFile, Target, TargetContext } from '../../src/codegen/target.js';

export async function runTarget(target: Target, context: TargetContext): Promise<GeneratedFile[]> {
  const files = await target.generate(context);
  return Promise.all(
    files.map(async (file) => ({ path: file.path, content: await finishFile(file) })),
  );
}
