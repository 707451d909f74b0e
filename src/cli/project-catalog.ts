/**
 * The catalog a command works on: the repository's own events folder plus the events of every
 * catalog it depends on (`catalogs` in the config). Dependencies are loaded first, each on its
 * own (their problems name their own files), then the own folder with their events beside it, so
 * a consumer may subscribe to them and a clash between the two is reported.
 */
import {
  resolveCatalogDependencies,
  type CatalogDependency,
} from '../catalog/catalog-dependencies.js';
import { loadCatalog, type LoadCatalogOptions } from '../catalog/load-catalog.js';
import type { Catalog, EventDefinition } from '../catalog/model.js';
import { displayPath } from '../catalog/read-json-file.js';
import { CONFIG_FILE_NAME, type EvgenConfig } from './config.js';

/** One dependency and its catalog as loaded (its own events, no `dependency` mark). */
export interface LoadedDependency {
  readonly dependency: CatalogDependency;
  readonly catalog: Catalog;
}

export interface ProjectCatalog {
  /** Own events and dependency events (marked with `dependency`), own consumers. */
  readonly catalog: Catalog;
  readonly dependencies: readonly LoadedDependency[];
  /** The dependencies' events as they are in `catalog` (marked with `dependency`). */
  readonly dependencyEvents: readonly EventDefinition[];
}

/** Loads the dependencies' catalogs, in the config's (sorted) order. */
export async function loadDependencies(config: EvgenConfig): Promise<LoadedDependency[]> {
  const found = resolveCatalogDependencies(
    config.catalogs,
    displayPath(config.file ?? CONFIG_FILE_NAME),
  );
  const loaded: LoadedDependency[] = [];
  for (const dependency of found) {
    const catalog = await loadCatalog(dependency.eventsDir, {
      ...(dependency.eventTypeFormat !== undefined
        ? { eventTypeFormat: dependency.eventTypeFormat }
        : {}),
      wireFormat: dependency.wireFormat,
    });
    loaded.push({ dependency, catalog });
  }
  return loaded;
}

/** The own catalog with the dependencies' events in it. */
export async function loadProjectCatalog(
  config: EvgenConfig,
  options: LoadCatalogOptions = {},
): Promise<ProjectCatalog> {
  const dependencies = await loadDependencies(config);
  const dependencyEvents = dependencies.flatMap(({ dependency, catalog }) =>
    catalog.events.map((event) => ({
      ...event,
      dependency: { name: dependency.name, root: catalog.root },
    })),
  );
  const catalog = await loadCatalog(config.events, {
    eventTypeFormat: config.eventTypeFormat,
    wireFormat: config.wireFormat,
    ...options,
    ...(dependencyEvents.length > 0 ? { dependencyEvents } : {}),
  });
  return { catalog, dependencies, dependencyEvents };
}
