// Loaded with `node --import`: records every module URL the process resolves (one per line) into
// the file named by EVGEN_MODULE_LOG, so tests can assert which modules a command loads.
import { register } from 'node:module';

register('./record-module-loads-hooks.mjs', import.meta.url, {
  data: { log: process.env.EVGEN_MODULE_LOG },
});
