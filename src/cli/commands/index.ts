/** Every CLI command, one file each; each export registers its command on the program. */
import type { Command } from 'commander';
import { registerBuild } from './build.js';
import { registerNew } from './new.js';
import { registerVersion } from './version.js';

export type RegisterCommand = (program: Command) => void;

export const commands: readonly RegisterCommand[] = [registerBuild, registerNew, registerVersion];
