/**
 * The part of `evgen check` about the catalogs a repository depends on: each installed catalog is
 * judged against the pins of what the repository's consumers read (`checkDependency`), and
 * `--update-lock` pins what they read now.
 */
import { readFile } from 'node:fs/promises';
import type { CompatibilityPolicy } from '../catalog/model.js';
import { displayPath } from '../catalog/read-json-file.js';
import { checkDependency } from '../compat/check-dependency.js';
import { formatPins, pinsOf, pinsPath, readDependencyPins } from '../compat/dependency-pins.js';
import type { CompatibilityViolation } from '../compat/violation.js';
import type { LoadedDependency, ProjectCatalog } from './project-catalog.js';
import { writeAtomically } from './write-atomically.js';

export interface DependenciesVerdict {
  readonly violations: readonly CompatibilityViolation[];
  readonly notes: readonly string[];
  readonly events: number;
  readonly pairsChecked: number;
}

/** Event types the repository's own consumers subscribe to. */
function subscribedTypes(project: ProjectCatalog): Set<string> {
  return new Set(project.catalog.consumers.flatMap((consumer) => consumer.subscribes));
}

/** Whether the repository's consumers read any event of the dependency. */
function isRead(dependency: LoadedDependency, subscribed: ReadonlySet<string>): boolean {
  return dependency.catalog.events.some((event) => subscribed.has(event.eventType));
}

/** Judges every dependency the repository's consumers read against its pins. */
export async function judgeDependencies(
  project: ProjectCatalog,
  eventsRoot: string,
  policy: CompatibilityPolicy | undefined,
): Promise<DependenciesVerdict> {
  const subscribed = subscribedTypes(project);
  const violations: CompatibilityViolation[] = [];
  const notes: string[] = [];
  let events = 0;
  let pairsChecked = 0;
  for (const dependency of project.dependencies) {
    if (!isRead(dependency, subscribed)) continue;
    const { name } = dependency.dependency;
    const pins = await readDependencyPins(eventsRoot, name);
    if (pins === undefined) {
      notes.push(
        `catalog ${name} is not pinned (${displayPath(pinsPath(eventsRoot, name))}): an upgrade of it is not judged against what this repository's consumers read; pin it with evgen check --update-lock`,
      );
      continue;
    }
    const result = checkDependency({
      name,
      catalog: dependency.catalog,
      pins,
      subscribed,
      ...(policy !== undefined ? { policy } : {}),
    });
    violations.push(...result.violations);
    notes.push(...result.notes);
    events += result.events;
    pairsChecked += result.pairsChecked;
  }
  return { violations, notes, events, pairsChecked };
}

/** Pins what the repository's consumers read of each dependency now; returns what it said. */
export async function pinDependencies(
  project: ProjectCatalog,
  eventsRoot: string,
): Promise<string[]> {
  const subscribed = subscribedTypes(project);
  const messages: string[] = [];
  for (const dependency of project.dependencies) {
    if (!isRead(dependency, subscribed)) continue;
    const { name, packageId, eventsDir } = dependency.dependency;
    const path = pinsPath(eventsRoot, name);
    const text = formatPins(
      name,
      packageId ?? displayPath(eventsDir),
      pinsOf(dependency.catalog, subscribed),
    );
    const current = await readFile(path, 'utf8').catch(() => undefined);
    if (current === text) continue;
    await writeAtomically(path, text);
    messages.push(
      `evgen check: pinned what this repository reads of catalog ${name} in ${displayPath(path)}`,
    );
  }
  return messages;
}
