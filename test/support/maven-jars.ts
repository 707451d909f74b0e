/**
 * Jars from Maven Central for the tests' Java processes (brokers, Kafka Connect, Java clients),
 * fetched once with `mvn dependency:copy-dependencies` from a throwaway pom into a cache folder
 * outside the repository, and small Java programs compiled against them.
 *
 * `runJavaProgram` runs such a program the way the interop tests talk to one: arguments and
 * standard input in, standard output back.
 *
 * Both steps write into a staging folder and rename it into place, so a run killed half-way never
 * leaves a folder that looks complete; a lock folder makes parallel runs download or compile once.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { withLock } from './file-lock.js';

/** A jar the folder must hold: an exact file name, or a pattern for one whose version floats. */
export type RequiredJar = string | RegExp;

/** true when `folder` holds every `required` jar. */
export function hasJars(folder: string, required: readonly RequiredJar[]): boolean {
  if (!existsSync(folder)) return false;
  const jars = readdirSync(folder);
  return required.every((jar) =>
    typeof jar === 'string' ? jars.includes(jar) : jars.some((name) => jar.test(name)),
  );
}

/**
 * Copies the runtime dependencies of `pom` into `into` unless it already holds every `required`
 * jar; returns `into`. `what` names the jars in the error when mvn fails (no mvn, Central away).
 */
export function fetchMavenJars(
  pom: string,
  into: string,
  required: readonly RequiredJar[],
  what: string,
): string {
  if (hasJars(into, required)) return into;
  mkdirSync(dirname(into), { recursive: true });
  return withLock(`${into}.lock`, () => {
    if (hasJars(into, required)) return into;
    const staging = `${into}.${process.pid}.partial`;
    rmSync(staging, { recursive: true, force: true });
    try {
      run(
        'mvn',
        [
          '-q',
          '-B',
          '-f',
          pom,
          'dependency:copy-dependencies',
          '-DincludeScope=runtime',
          `-DoutputDirectory=${staging}`,
        ],
        `fetching ${what} from Maven Central with ${basename(pom)} (is mvn installed and Central reachable?)`,
      );
      if (!hasJars(staging, required)) {
        throw new Error(`${what}: ${basename(pom)} did not bring ${required.join(', ')}`);
      }
      rmSync(into, { recursive: true, force: true }); // an incomplete folder of an older run
      renameSync(staging, into);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    return into;
  });
}

/**
 * Compiles the single-file program `source` (Java 17) against `classPath` into
 * `<cache>/classes-<hash of the source>/`, once: an edited program is rebuilt, an unchanged one
 * is not. Returns the folder of its classes.
 */
export function compileJavaProgram(source: string, classPath: string, cache: string): string {
  const hash = createHash('sha256').update(readFileSync(source)).digest('hex').slice(0, 12);
  const classes = join(cache, `classes-${hash}`);
  const main = `${basename(source, '.java')}.class`;
  if (existsSync(join(classes, main))) return classes;
  mkdirSync(cache, { recursive: true });
  return withLock(`${classes}.lock`, () => {
    if (existsSync(join(classes, main))) return classes;
    const staging = `${classes}.${process.pid}.partial`;
    rmSync(staging, { recursive: true, force: true });
    try {
      run('javac', ['--release', '17', '-cp', classPath, '-d', staging, source], 'javac');
      rmSync(classes, { recursive: true, force: true });
      renameSync(staging, classes);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    return classes;
  });
}

/** Runs a command to completion; throws with its output when it fails. */
export function run(command: string, args: readonly string[], what: string): void {
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.error || result.status !== 0) {
    throw new Error(
      `${what} failed (${command} ${args.join(' ')}): ${result.error?.message ?? ''}\n${result.stdout}${result.stderr}`,
    );
  }
}

/**
 * Runs `java -cp classPath mainClass ...args` with `input` on its standard input; resolves with
 * its standard output once it exits 0, rejects with its output otherwise. Killed after 2 minutes:
 * a hung JVM must fail the test, not hold it.
 */
export function runJavaProgram(
  classPath: string,
  mainClass: string,
  args: readonly string[],
  input = '',
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', ['-cp', classPath, mainClass, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `java ${mainClass} ${args[0]} exited with ${code ?? signal}:\n${stderr}\n${stdout}`,
          ),
        );
    });
    child.stdin.end(input);
  });
}
