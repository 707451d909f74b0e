/**
 * Embedded PostgreSQL for tests. One instance costs ~2 s and ~700 MB and is ONE session, so a
 * test file shares one and gives each test its own schema in it.
 */
import { PGlite } from '@electric-sql/pglite';

/** A ready PGlite instance; the caller closes it. */
export async function startPglite(): Promise<PGlite> {
  const pglite = new PGlite();
  await pglite.waitReady;
  return pglite;
}
