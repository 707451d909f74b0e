/** Every CLI command, one file each; each export registers its command on the program. */
import type { Command } from 'commander';
import { registerAsyncApi } from './asyncapi.js';
import { registerBuild } from './build.js';
import { registerCheck } from './check.js';
import { registerDiff } from './diff.js';
import { registerNew } from './new.js';
import { registerScaffold } from './scaffold.js';
import { registerVersion } from './version.js';

export type RegisterCommand = (program: Command) => void;

export const commands: readonly RegisterCommand[] = [
  registerAsyncApi,
  registerBuild,
  registerCheck,
  registerDiff,
  registerNew,
  registerScaffold,
  registerVersion,
];
