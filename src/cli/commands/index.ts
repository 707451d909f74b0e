/** Every CLI command, one file each; each export registers its command on the program. */
import type { Command } from 'commander';

export type RegisterCommand = (program: Command) => void;

export const commands: readonly RegisterCommand[] = [];
