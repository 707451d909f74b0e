/**
 * docs/reference/cli.md, rendered from the CLI's own commander definitions (every command,
 * subcommand, argument and option as `createProgram()` registers them), so the reference cannot
 * say anything the CLI does not do.
 */
import type { Argument, Command, Option } from 'commander';
import { createProgram } from '../../src/cli/main.js';
import { anchor, cell } from './markdown-text.js';

function defaultOf(option: Option): string {
  const shown =
    option.defaultValueDescription ??
    (option.defaultValue === undefined ? undefined : JSON.stringify(option.defaultValue));
  return shown === undefined ? '' : `\`${shown}\``;
}

function optionText(option: Option): string {
  const parts = [option.description];
  if (option.argChoices !== undefined) {
    parts.push(`(one of ${option.argChoices.map((choice) => `\`${choice}\``).join(', ')})`);
  }
  if (option.envVar !== undefined) parts.push(`Environment: \`${option.envVar}\`.`);
  return cell(parts.filter((part) => part !== '').join(' '));
}

function argumentName(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? '...' : ''}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

function renderCommand(command: Command, out: string[]): void {
  const path = commandPath(command);
  const subcommands = command.commands as Command[];
  out.push(`## \`${path}\``, '');
  if (command.description() !== '') out.push(cell(command.description()), '');
  out.push('```', `${path} ${command.usage()}`.trimEnd(), '```', '');
  const args = command.registeredArguments;
  if (args.length > 0) {
    out.push('| argument | description |', '| --- | --- |');
    for (const argument of args)
      out.push(`| \`${argumentName(argument)}\` | ${cell(argument.description)} |`);
    out.push('');
  }
  const options = command.options.filter((option) => !option.hidden);
  if (options.length > 0) {
    out.push('| option | description | default |', '| --- | --- | --- |');
    for (const option of options)
      out.push(`| \`${option.flags}\` | ${optionText(option)} | ${defaultOf(option)} |`);
    out.push('');
  }
  if (subcommands.length > 0) {
    out.push(`Subcommands: ${subcommands.map((sub) => `\`${sub.name()}\``).join(', ')}.`, '');
  }
  for (const sub of subcommands) renderCommand(sub, out);
}

export async function renderCliReference(): Promise<string> {
  const program = await createProgram();
  const commands = [...(program.commands as Command[])].sort((a, b) =>
    a.name().localeCompare(b.name()),
  );
  const out = [
    '# CLI reference',
    '',
    "<!-- Generated from the CLI's commander definitions by test/docs/cli-reference.ts; do not edit.",
    '     Rewrite with: EVGEN_UPDATE=1 npx vitest run test/docs/reference-docs.test.ts -->',
    '',
    `${cell(program.description())}. Every command also takes \`-h, --help\`; \`evgen --version\` prints the version.`,
    '',
    'Exit codes of every command: `0` fine, `1` findings (an incompatible change, stale output, a',
    'health check that failed, nothing found), `2` bad input or usage, with every problem printed as',
    '`file#/json/pointer: message` and a one-line hint. Guides: [the catalog](../guides/catalog.md),',
    '[compatibility](../concepts/compatibility.md), [CDC](../guides/cdc-debezium.md), [the operator',
    'CLI](../operations/operator-cli.md).',
    '',
    '| command | what it does |',
    '| --- | --- |',
    ...commands.map(
      (command) =>
        `| [\`evgen ${command.name()}\`](#${anchor(`evgen ${command.name()}`)}) | ${cell(command.description())} |`,
    ),
    '',
  ];
  for (const command of commands) renderCommand(command, out);
  return `${out.join('\n').trimEnd()}\n`;
}
