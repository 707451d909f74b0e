/**
 * One switch for every test that compares against committed expected files (golden output, error
 * corpus): `EVGEN_UPDATE=1 npx vitest run <dir>` rewrites them from the current code instead.
 * The old per-suite names are refused loudly, so a stale command never silently compares instead.
 */
for (const old of ['UPDATE_GOLDEN', 'EVGEN_UPDATE_CORPUS']) {
  if (process.env[old] !== undefined) {
    throw new Error(`${old} is no longer read: use EVGEN_UPDATE=1 to rewrite expected files`);
  }
}

export const UPDATE_EXPECTED = process.env.EVGEN_UPDATE === '1';
