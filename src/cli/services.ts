// `svc dev` and `svc serve <service>`: start services. Nothing is opened before every port and setting is checked.
import type { Argv } from 'yargs';
import type { ServiceDefinition, SharedParts } from '../platform/service.ts';
import type { Cli, CommandGroup } from './command.ts';
import { UsageError } from './usage-error.ts';

export const devCommand: CommandGroup = (program, cli) =>
  program.command(
    'dev',
    'start every service in one process on embedded defaults (PGlite, in-process wasm policies, offline gateway)',
    (y) => y.example('SVC_EXPLORE_PORT=9081 svc dev', 'explore on 9081, the others on their default ports'),
    async () => {
      const { checkServices, openSharedParts } = await import('../platform/launcher.ts');
      const services = await allServices(cli);
      const ports = checkServices(services, cli.env); // every service's settings, before the database opens
      // The runtime asks explore about every launch: in one process, that is explore on whatever port it was given.
      cli.env.SVC_EXPLORE_URL ||= `http://127.0.0.1:${ports.get('explore') ?? 8081}`;
      const shared = await openSharedParts(cli.env, { embedded: true });
      // The embedded defaults trust identity headers from anyone who can connect: only this machine, unless told;
      // and on a terminal its logs are for a person (pino-pretty); piped, they stay JSON lines
      cli.exitCode = await runUntilSignal(services, shared, cli, {
        ports,
        hostname: shared.platform.HOST ?? '127.0.0.1',
        prettyLogs: process.stdout.isTTY === true,
      });
    },
  );

export const serveCommand: CommandGroup = (program, cli) =>
  program.command(
    // [service], not <service>: without one the message names the services, not yargs' count of arguments
    'serve [service]',
    'start one service on what the configuration selects (Postgres, OPA, Trino, a gateway)',
    (y: Argv) =>
      y
        .positional('service', { describe: 'the service to start', choices: Object.keys(cli.services), type: 'string' })
        .option('port', {
          describe: "listen on this port instead of the service's SVC_<SERVICE>_PORT (1 to 65535; 0: any free port)",
          type: 'string',
          requiresArg: true,
        })
        .example('svc serve explore --port 9081', 'explore alone, on port 9081'),
    async (args) => {
      if (args.service === undefined)
        throw new UsageError(`svc serve starts one service: name it (${Object.keys(cli.services).join(', ')}), e.g. svc serve explore`);
      const { checkServices, openSharedParts } = await import('../platform/launcher.ts');
      const { isPort, portProblem } = await import('../platform/config.ts');
      const portOverride = args.port === undefined ? undefined : Number(args.port);
      if (portOverride !== undefined && !isPort(portOverride, { listening: true }))
        throw new UsageError(`--port ${args.port}: ${portProblem({ listening: true })}`);
      const service = await cli.services[String(args.service)]!();
      const ports = checkServices([service], cli.env, portOverride); // a bad setting stops here, before the database opens
      const shared = await openSharedParts(cli.env, { embedded: false, database: service.usesDatabase !== false });
      cli.exitCode = await runUntilSignal([service], shared, cli, {
        ports,
        hostname: shared.platform.HOST ?? '0.0.0.0',
        portOverride,
        portFlag: true,
      });
    },
  );

export const allServices = (cli: Cli): Promise<ServiceDefinition[]> => Promise.all(Object.values(cli.services).map((load) => load()));

async function runUntilSignal(
  services: ServiceDefinition[],
  shared: SharedParts,
  cli: Cli,
  opts: { ports: Map<string, number>; hostname: string; prettyLogs?: boolean; portOverride?: number | undefined; portFlag?: boolean },
): Promise<number> {
  const { launch } = await import('../platform/launcher.ts');
  const { portOverride, ...rest } = opts;
  const launched = await launch(services, cli.env, shared, portOverride === undefined ? rest : { ...rest, portOverride }).catch(
    async (err: unknown) => {
      await shared.policy.close?.();
      await shared.db.close();
      throw err;
    },
  );
  console.log(launched.map((l) => `${l.name.padEnd(20)} ${l.url}`).join('\n'));
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await Promise.all(launched.map((l) => l.close()));
  await shared.policy.close?.();
  await shared.db.close();
  return 0;
}
