/**
 * Packs the two release packages from a fresh compile of src/:
 *
 * - `evgen`: the generator and CLI, for a service's devDependencies;
 * - `evgen-runtime`: src/runtime alone (what generated code imports), for its dependencies.
 *
 * Each gets a package.json written here: no scripts (a consumer never runs `prepare`), no
 * devDependencies, and exactly the dependencies its compiled code imports, at the versions pinned
 * in the repository's package.json. Drivers the runtime only loads on demand (`pg`, PGlite, Kafka
 * clients) become optional peer dependencies (PGlite is not declared, see below), so a service
 * installs only the ones it uses.
 *
 *     npm run release:pack -- <out-dir>    # writes evgen-<v>.tgz and evgen-runtime-<v>.tgz
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';

const run = promisify(execFile);
export const REPO = fileURLToPath(new URL('../', import.meta.url));
export const RUNTIME_PACKAGE = 'evgen-runtime';

/**
 * Loaded by the runtime only when a caller asks for them (dynamic `import()`, or `require` from
 * `createRequire` for a CommonJS package a synchronous function loads: prom-client). The data-layer
 * libraries that only an adapter entry point imports are optional peers too: the repository's
 * peerDependencies pin them.
 */
const OPTIONAL_PEERS = ['pg', '@platformatic/kafka', '@opentelemetry/api', 'prom-client', 'ws'];
/**
 * Loaded on demand but not declared at all: npm counts an optional peer edge from a production
 * package as production, so a service that keeps PGlite in devDependencies (for tests) would get
 * its 27 MB in `npm ci --omit=dev`, and a service on @platformatic/kafka would get kafkajs (the
 * CLI's own dependency, for its Kafka operator commands). Node still finds either in the
 * service's node_modules when the service installs it.
 */
const UNDECLARED_ON_DEMAND = ['@electric-sql/pglite', 'kafkajs'];
/** Runtime entry points besides the index (subpath → file in src/runtime without extension). */
const RUNTIME_ADAPTER_ENTRIES: Readonly<Record<string, string>> = {
  kafkajs: 'kafkajs',
  'platformatic-kafka': 'platformatic-kafka',
  kysely: 'kysely',
  knex: 'knex',
  drizzle: 'drizzle',
  typeorm: 'typeorm',
  prisma: 'prisma',
};
/** Not imported by the runtime itself but by the validators.js files `evgen build` writes. */
const GENERATED_CODE_IMPORTS = ['ajv', 'ajv-formats'];

interface RootPackageJson {
  name: string;
  version: string;
  description: string;
  license: string;
  engines: Record<string, string>;
  bin: Record<string, string>;
  exports: Record<string, unknown>;
  dependencies: Record<string, string>;
  /** Libraries only an adapter entry point imports (a service brings its own copy). */
  peerDependencies?: Record<string, string>;
}

export interface ReleasePackage {
  readonly name: string;
  /** The staged package folder (what was packed); removed with the temp folder. */
  readonly folder: string;
  /** Absolute path of the tarball in the output folder. */
  readonly tarball: string;
  /** Paths inside the tarball, sorted. */
  readonly files: readonly string[];
  readonly packageJson: Record<string, unknown>;
}

/** Compiles, stages and packs both packages into `outDir`. */
export async function packRelease(outDir: string): Promise<ReleasePackage[]> {
  const root = await mkdtemp(join(tmpdir(), 'evgen-release-'));
  try {
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as RootPackageJson;
    const build = join(root, 'build');
    await mkdir(build);
    for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src']) {
      await cp(join(REPO, entry), join(build, entry), { recursive: true });
    }
    await symlink(join(REPO, 'node_modules'), join(build, 'node_modules'), 'dir');
    await exec(
      process.execPath,
      [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      build,
    );
    const dist = join(build, 'dist');
    await mkdir(outDir, { recursive: true });

    // The generator: dist/ (its runtime copy included: the outbox target reuses its SQL), the
    // sources its source maps point to, the templates.
    const generator = join(root, 'evgen');
    await cp(dist, join(generator, 'dist'), { recursive: true });
    await cp(join(REPO, 'src'), join(generator, 'src'), { recursive: true });
    await cp(join(REPO, 'templates'), join(generator, 'templates'), { recursive: true });
    await cp(join(REPO, 'README.md'), join(generator, 'README.md'));
    await cp(join(REPO, 'docs'), join(generator, 'docs'), { recursive: true });
    const generatorImports = await reachableImports(dist, ['index.js', 'cli/main.js']);
    const generatorJson = {
      name: pkg.name,
      version: pkg.version,
      description: pkg.description,
      license: pkg.license,
      type: 'module',
      engines: pkg.engines,
      bin: pkg.bin,
      exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } },
      files: ['dist', 'src', 'templates', 'docs'],
      ...dependencyFields(pkg, generatorImports),
    };
    await writeJson(join(generator, 'package.json'), generatorJson);

    // The runtime: dist/runtime as the package's dist/, src/runtime as its src/ (maps rewritten).
    const runtime = join(root, RUNTIME_PACKAGE);
    await cp(join(dist, 'runtime'), join(runtime, 'dist'), { recursive: true });
    await cp(join(REPO, 'src/runtime'), join(runtime, 'src'), { recursive: true });
    await rerootSourceMaps(join(runtime, 'dist'), join(dist, 'runtime'), {
      from: join(build, 'src/runtime'),
      to: join(runtime, 'src'),
    });
    await writeFile(
      join(runtime, 'README.md'),
      `# ${RUNTIME_PACKAGE}\n\nThe runtime that code generated by \`evgen build\` imports: envelopes, validation,\n` +
        'transactional outbox and relay, inbox-guarded consumers, RabbitMQ and in-process transports.\n' +
        'Install it in dependencies and the `evgen` generator in devDependencies; see the evgen README and docs/.\n',
    );
    const reached = await reachableImports(join(dist, 'runtime'), ['index.js']);
    // Imported only by an adapter's own entry point: installed by the services that use it.
    const adapters = await reachableImports(
      join(dist, 'runtime'),
      Object.values(RUNTIME_ADAPTER_ENTRIES).map((file) => `${file}.js`),
    );
    const runtimeImports: Imports = {
      static: new Set([...reached.static, ...GENERATED_CODE_IMPORTS]),
      lazy: new Set(
        [...reached.lazy, ...adapters.static, ...adapters.lazy].filter(
          (name) => !reached.static.has(name),
        ),
      ),
    };
    const runtimeJson = {
      name: RUNTIME_PACKAGE,
      version: pkg.version,
      description: `The runtime of evgen's generated code (${pkg.name} is the generator).`,
      license: pkg.license,
      type: 'module',
      engines: pkg.engines,
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        ...Object.fromEntries(
          Object.entries(RUNTIME_ADAPTER_ENTRIES).map(([subpath, file]) => [
            `./${subpath}`,
            { types: `./dist/${file}.d.ts`, default: `./dist/${file}.js` },
          ]),
        ),
      },
      files: ['dist', 'src'],
      ...dependencyFields(pkg, runtimeImports),
    };
    await writeJson(join(runtime, 'package.json'), runtimeJson);

    const packed: ReleasePackage[] = [];
    for (const [folder, json] of [
      [generator, generatorJson],
      [runtime, runtimeJson],
    ] as const) {
      const { stdout } = await exec(
        'npm',
        ['pack', '--json', '--pack-destination', resolve(outDir)],
        folder,
      );
      const [report] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
      if (report === undefined) throw new Error(`npm pack printed no report in ${folder}`);
      packed.push({
        name: json.name,
        folder,
        tarball: join(resolve(outDir), report.filename),
        files: report.files.map((file) => file.path).sort(),
        packageJson: json,
      });
    }
    return packed;
  } finally {
    if (process.env.EVGEN_KEEP_RELEASE_STAGE === undefined) {
      await rm(root, { recursive: true, force: true });
    }
  }
}

interface Imports {
  /** Bare specifiers loaded when the entry points are imported. */
  readonly static: ReadonlySet<string>;
  /** Bare specifiers loaded only by `import()` or named only in declaration files. */
  readonly lazy: ReadonlySet<string>;
}

/**
 * Walks the compiled JavaScript from `entries` through relative imports and collects the
 * packages it imports: static imports must be installed, `import()` and types may be optional.
 */
async function reachableImports(dir: string, entries: readonly string[]): Promise<Imports> {
  const staticImports = new Set<string>();
  const lazy = new Set<string>();
  const seen = new Set<string>();
  const queue = entries.map((entry) => join(dir, entry));
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = await readFile(file, 'utf8');
    for (const [specifier, dynamic] of importSpecifiers(code)) {
      if (specifier.startsWith('.')) {
        queue.push(resolve(dirname(file), specifier));
      } else if (!specifier.startsWith('node:')) {
        (dynamic ? lazy : staticImports).add(packageName(specifier));
      }
    }
    const declarations = file.replace(/\.js$/, '.d.ts');
    const types = await readFile(declarations, 'utf8').catch(() => '');
    for (const [specifier] of importSpecifiers(types)) {
      if (!specifier.startsWith('.') && !specifier.startsWith('node:')) {
        lazy.add(packageName(specifier));
      }
    }
  }
  for (const name of staticImports) lazy.delete(name);
  return { static: staticImports, lazy };
}

function importSpecifiers(code: string): [specifier: string, dynamic: boolean][] {
  const found: [string, boolean][] = [];
  const visit = (node: ts.Node): void => {
    if (
      (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push([node.moduleSpecifier.text, false]);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push([node.arguments[0].text, true]);
    } else if (
      ts.isCallExpression(node) &&
      ts.isIdentifier(node.expression) &&
      node.expression.text === 'require' &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push([node.arguments[0].text, true]);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const literal = node.argument.literal;
      if (ts.isStringLiteral(literal)) found.push([literal.text, true]);
    }
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('module.ts', code, ts.ScriptTarget.Latest, false));
  return found;
}

function packageName(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

function dependencyFields(
  pkg: RootPackageJson,
  imports: Imports,
): {
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional: true }>;
} {
  const pinned = (name: string): string => {
    const version = pkg.dependencies[name] ?? pkg.peerDependencies?.[name];
    if (version === undefined) {
      throw new Error(
        `the compiled code imports '${name}', which package.json dependencies and peerDependencies lack`,
      );
    }
    return version;
  };
  const dependencies: Record<string, string> = {};
  const peers: Record<string, string> = {};
  for (const name of [...imports.static].sort()) dependencies[name] = pinned(name);
  for (const name of [...imports.lazy].sort()) {
    if (UNDECLARED_ON_DEMAND.includes(name)) continue;
    if (OPTIONAL_PEERS.includes(name) || pkg.peerDependencies?.[name] !== undefined) {
      peers[name] = compatibleRange(pinned(name));
    } else dependencies[name] = pinned(name);
  }
  const sorted = Object.fromEntries(
    Object.entries(dependencies).sort(([a], [b]) => (a < b ? -1 : 1)),
  );
  if (Object.keys(peers).length === 0) return { dependencies: sorted };
  return {
    dependencies: sorted,
    peerDependencies: peers,
    peerDependenciesMeta: Object.fromEntries(
      Object.keys(peers).map((name) => [name, { optional: true as const }]),
    ),
  };
}

/**
 * A peer is the service's own copy (its pg, its mysql2, its Kysely), so the runtime must accept
 * any release compatible with the one it is tested against: an exact pin made `npm install` fail
 * with ERESOLVE as soon as the service (or another of its packages) brought a newer patch.
 * Dependencies stay pinned: those copies are the runtime's own.
 */
export function compatibleRange(version: string): string {
  if (!/^\d+\.\d+\.\d+$/.test(version)) {
    throw new Error(`package.json pins '${version}'; a release needs an exact version to widen`);
  }
  return `^${version}`;
}

/** Source maps copied to another folder: point their `sources` at the same files' new place. */
async function rerootSourceMaps(
  dir: string,
  originalDir: string,
  sources: { from: string; to: string },
): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      await rerootSourceMaps(path, join(originalDir, entry.name), sources);
      continue;
    }
    if (!entry.name.endsWith('.js.map')) continue;
    const map = JSON.parse(await readFile(path, 'utf8')) as { sources: string[] };
    map.sources = map.sources.map((source) => {
      const original = resolve(originalDir, source);
      const moved = join(sources.to, relative(sources.from, original));
      return relative(dir, moved).split(sep).join(posix.sep);
    });
    await writeFile(path, JSON.stringify(map));
  }
}

async function writeJson(path: string, value: unknown): Promise<void> {
  await writeFile(path, `${JSON.stringify(value, null, 2)}\n`);
}

async function exec(
  file: string,
  args: readonly string[],
  cwd: string,
): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(file, [...args], { cwd, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    throw new Error(
      `${file} ${args.join(' ')} exited ${String(failed.code)}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`,
      { cause: error },
    );
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = process.argv[2];
  if (outDir === undefined) {
    process.stderr.write('usage: npm run release:pack -- <out-dir>\n');
    process.exit(2);
  }
  for (const packed of await packRelease(outDir)) {
    process.stdout.write(`${packed.tarball}\n`);
  }
}
