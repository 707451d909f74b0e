/** Every CLI command, one file each; each export registers its command on the program. */
import type { Command } from 'commander';
import { registerAsyncApi } from './asyncapi.js';
import { registerBuild } from './build.js';
import { registerCheck } from './check.js';
import { registerDiff } from './diff.js';
import { registerDlq } from './dlq.js';
import { registerNew } from './new.js';
import { registerOutbox } from './outbox.js';
import { registerScaffold } from './scaffold.js';
import { registerTrace } from './trace.js';
import { registerVersion } from './version.js';

export type RegisterCommand = (program: Command) => void;

export const commands: readonly RegisterCommand[] = [
  registerAsyncApi,
  registerBuild,
  registerCheck,
  registerDiff,
  registerDlq,
  registerNew,
  registerOutbox,
  registerScaffold,
  registerTrace,
  registerVersion,
];
