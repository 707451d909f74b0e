/**
 * What a catalog package must be, judged on the files `npm pack` would put in it: package.json
 * (with the usual README/LICENSE/CHANGELOG npm always adds) and the events folder, nothing else —
 * nothing generated, no code — and that folder exactly a loadable catalog whose lock releases
 * every version in it, unchanged. A consumer builds from the package and pins what it reads; an
 * unreleased or edited version in a published package would be read as released.
 */
import { readdirSync } from 'node:fs';
import { join, posix, relative, sep } from 'node:path';
import { compareStrings } from '../common/json-value.js';
import { readReleaseLock, versionHash } from './release-lock.js';
import type { CatalogProblem } from '../catalog/catalog-error.js';
import { CatalogError } from '../catalog/catalog-error.js';
import {
  packageCatalogDir,
  packageEventTypeFormat,
  packageWireFormat,
} from '../catalog/catalog-dependencies.js';
import { RELEASE_LOCK_FILE, loadCatalog } from '../catalog/load-catalog.js';
import { displayPath } from '../catalog/read-json-file.js';

/** Files npm adds to every package whatever `files` says; harmless beside a catalog. */
const ALWAYS_PACKED =
  /^(package\.json|readme(\..*)?|license(\..*)?|licence(\..*)?|changelog(\..*)?)$/i;

/** Every file under `dir`, relative and `/`-separated, hidden ones (`.x`) left out as npm does. */
function filesUnder(dir: string, base = dir): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path, base));
    else found.push(relative(base, path).split(sep).join('/'));
  }
  return found;
}

export interface PackageCheckResult {
  readonly events: number;
  readonly versions: number;
}

/**
 * Checks a catalog package folder given the files `npm pack` lists for it. Throws a CatalogError
 * with every problem; returns what the package holds when it is a catalog package.
 */
export async function checkCatalogPackage(
  packageDir: string,
  packed: readonly string[],
  eventTypeFormat: string | undefined,
): Promise<PackageCheckResult> {
  const packageJson = displayPath(join(packageDir, 'package.json'));
  const catalogDir = packageCatalogDir(packageDir, packageJson);
  // Consumers take the producer's wire format from here: a wrong value stops the pack.
  const wireFormat = packageWireFormat(packageDir, packageJson);
  const catalogPath = relative(packageDir, catalogDir).split(sep).join('/');
  const problems: CatalogProblem[] = [];
  const inCatalog = (file: string) => file.startsWith(`${catalogPath}/`);
  for (const file of [...packed].sort(compareStrings)) {
    if (inCatalog(file) || ALWAYS_PACKED.test(file)) continue;
    problems.push({
      code: 'not-a-catalog-file',
      file: displayPath(join(packageDir, file)),
      pointer: '',
      message: `npm pack would put ${file} in the catalog package: it holds the events folder and its lock only, nothing generated`,
      hint: `list only the events folder in package.json: "files": [${JSON.stringify(catalogPath)}]`,
    });
  }
  const onDisk = filesUnder(catalogDir).map((file) => posix.join(catalogPath, file));
  const packedSet = new Set(packed);
  for (const file of onDisk.filter((candidate) => !packedSet.has(candidate)))
    problems.push({
      code: 'catalog-file-not-packed',
      file: displayPath(join(packageDir, file)),
      pointer: '',
      message: `npm pack would leave ${file} out of the catalog package`,
      hint: 'remove what excludes it (.npmignore, "files" in package.json): consumers need every file of the catalog',
    });
  if (problems.length > 0) throw new CatalogError(problems);

  const format = eventTypeFormat ?? packageEventTypeFormat(packageDir);
  const catalog = await loadCatalog(catalogDir, {
    ...(format !== undefined ? { eventTypeFormat: format } : {}),
    wireFormat,
  });
  const lock = await readReleaseLock(catalogDir);
  const lockFile = displayPath(join(catalogDir, RELEASE_LOCK_FILE));
  if (lock === undefined)
    throw new CatalogError([
      {
        code: 'catalog-not-locked',
        file: lockFile,
        pointer: '',
        message: 'the catalog has no lock: consumers could not tell released versions from drafts',
        hint: 'run evgen check --update-lock before packing (it locks only after a passing check)',
      },
    ]);
  for (const event of catalog.events) {
    const locked = lock.events.get(event.dir);
    for (const version of event.versions) {
      const hash = locked?.get(version.version);
      if (hash === versionHash(version.bundled)) continue;
      problems.push({
        code: hash === undefined ? 'version-not-released' : 'released-version-changed',
        file: displayPath(join(catalogDir, version.file)),
        pointer: '',
        message:
          hash === undefined
            ? `v${version.version} of ${event.eventType} is not in ${RELEASE_LOCK_FILE}: a package holds released versions only`
            : `v${version.version} of ${event.eventType} differs from the version ${RELEASE_LOCK_FILE} released`,
        hint:
          hash === undefined
            ? 'run evgen check --update-lock (after a passing check), or move the draft out before packing'
            : 'released versions are immutable: revert the edit and add a new version',
      });
    }
  }
  if (problems.length > 0) throw new CatalogError(problems);
  return {
    events: catalog.events.length,
    versions: catalog.events.reduce((sum, event) => sum + event.versions.length, 0),
  };
}
