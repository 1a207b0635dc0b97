// One free-port helper: the runtime's workspace keeps it (it tests on its own), the root's tests use the same.
export * from '../../dashboards-runtime/tests/support/free-port.ts';
