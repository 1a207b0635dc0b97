// What every command group of the svc CLI is written against (program.ts assembles them).
import type { Argv } from 'yargs';
import type { ServiceDefinition } from '../platform/service.ts';

/** Each service's definition, loaded only when a command needs it (src/main.ts's table). */
export type Services = Readonly<Record<string, () => Promise<ServiceDefinition>>>;

/** What a command's handler runs with; `exitCode` is what it asks the process to exit with. */
export type Cli = { services: Services; env: NodeJS.ProcessEnv; exitCode: number };

/** A group of commands: adds its commands (with their flags and handlers) to the program. */
export type CommandGroup = (program: Argv, cli: Cli) => Argv;

/** Where a subcommand is required: `svc policies` alone says which it holds. */
export const needsSubcommand = (y: Argv, group: string) => y.demandCommand(1, `name a ${group} command`);
